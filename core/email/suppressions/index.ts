/**
 * Suppressed addresses: the store the send path reads, the company's API over it, and what a
 * provider event adds to it.
 * Code outside this folder imports it from here (npm run layers enforces it).
 */
export { listOwner, normalizeAddress, createSuppressionStore } from './suppression-store.ts';
export type { SuppressionStore } from './suppression-store.ts';
export { createSuppressionsApi } from './suppressions-api.ts';
export type { SuppressionsApi } from './suppressions-api.ts';
export { suppressionReasonOf } from './suppressions-from-webhook.ts';
export type { WebhookEventFields } from './suppressions-from-webhook.ts';
