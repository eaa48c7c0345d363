import type { AppContext } from '../../types.ts';

/**
 * How the dev pages answer. Two policies:
 * - the pages themselves run only their own script and stylesheet
 *   (/dev/assets/), talk only to this gateway and cannot be framed elsewhere;
 * - an email's HTML (and a template's) is untrusted content: served on its
 *   own URL in a CSP sandbox (no scripts, forms, plugins or same-origin
 *   access, even when opened directly), and shown in a sandboxed iframe.
 *   Images, styles and fonts load as a mail client would load them.
 */
export const PAGE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "frame-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

export const EMAIL_CSP = [
  'sandbox allow-popups allow-popups-to-escape-sandbox',
  "default-src 'none'",
  'img-src data: http: https:',
  "style-src 'unsafe-inline' http: https:",
  'font-src data: http: https:',
  "form-action 'none'",
  "frame-ancestors 'self'",
].join('; ');

function common(ctx: AppContext): void {
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.set('Referrer-Policy', 'no-referrer');
  ctx.set('Cache-Control', 'no-store');
}

/** A dev page (rendered by views.ts). */
export function sendPage(ctx: AppContext, html: string): void {
  common(ctx);
  ctx.set('Content-Security-Policy', PAGE_CSP);
  ctx.type = 'text/html; charset=utf-8';
  ctx.body = html;
}

/** An email's HTML part or a rendered template, for a sandboxed iframe. */
export function sendEmailHtml(ctx: AppContext, html: string): void {
  common(ctx);
  ctx.set('Content-Security-Policy', EMAIL_CSP);
  ctx.type = 'text/html; charset=utf-8';
  ctx.body = html;
}
