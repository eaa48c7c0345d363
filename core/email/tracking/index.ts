/**
 * Opens and clicks: view keys and the pixel's open buffer, signed click links and the threads
 * that scan and rewrite links in large HTML.
 * Code outside this folder imports it from here (npm run layers enforces it).
 */
export { CLICK_TOKEN_MAX_LENGTH } from './click-token.ts';
export { createClickTracking } from './click-tracking.ts';
export { createHtmlRenderPool } from './html-render-pool.ts';
export { createOpenBuffer } from './open-buffer.ts';
export type { FlushReport, OpenBufferStats } from './open-buffer.ts';
export { createTrackLimiter, recordEvent } from './events.ts';
export { looksLikeViewKey } from './view-key.ts';
