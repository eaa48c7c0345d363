import type { MessagePort } from 'node:worker_threads';
import { renderCustom } from '../../../templates/custom.ts';
import { findLinks } from './link-rewriter.ts';
import { packLinks, type PackedLinks } from './link-scan.ts';
import { threadStatPath } from './thread-budget.ts';

/**
 * What one render thread does with a caller's HTML (html-render-pool.ts):
 * the custom template's rendering (the pixel placed, the text part
 * converted) and, when the send tracks clicks, finding its links. Runs in a
 * worker thread: htmlparser2's tree building and html-to-text take time in
 * the square of the nesting depth, which no bound on the length prevents.
 */
export interface HtmlRenderRequest {
  htmlBody: string;
  subject: string;
  /** The pixel's URL, unescaped; undefined: no pixel. */
  trackingPixelUrl: string | undefined;
  /** Find the `<a href>` of the rendered HTML (click tracking). */
  findLinks: boolean;
}

export interface RenderedHtml {
  html: string;
  text: string;
  /** The links of `html`, in document order (unpackLinks); only when asked for. */
  links?: PackedLinks;
}

export default async function renderHtml({
  started,
  ...request
}: HtmlRenderRequest & { started: MessagePort }): Promise<RenderedHtml> {
  // The pool's time budget runs from here (not from when the task was queued), in this thread's CPU time.
  started.postMessage(threadStatPath());
  started.close();
  const { html, text } = renderCustom(request.htmlBody, request.subject, request.trackingPixelUrl);
  return request.findLinks ? { html, text, links: packLinks(await findLinks(html)) } : { html, text };
}
