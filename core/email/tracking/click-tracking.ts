import { clickTokens, type ClickTarget } from './click-token.ts';
import { rewriteLinks } from './link-rewriter.ts';
import { unpackLinks, type PackedLinks } from './link-scan.ts';

/**
 * Click tracking (docs/click-tracking.md): at send time every absolute
 * http(s) `<a href>` of the HTML part becomes
 * `{PUBLIC_BASE_URL}/api/email/click/{token}` (click-token.ts: signed, carries
 * the email id and the original URL); `GET` of that URL records the click
 * (and the open it implies) through the open buffer and redirects to the
 * original URL, for CLICK_LINK_LIFETIME_DAYS after the email was sent.
 *
 * Left alone: `mailto:`, `tel:`, `#anchors`, relative links, anything not
 * http(s), URLs over CLICK_URL_MAX_BYTES, links already pointing at the click
 * endpoint, `<a clicktracking="off">`, the links after the first
 * MAX_TRACKED_LINKS tracked ones, and every `src` (the open pixel,
 * images). The plain-text part is not rewritten: its reader sees the URL
 * itself, and an opaque tracking URL there would hide where a link leads.
 */

export const CLICK_PATH = '/api/email/click/';

/**
 * Links tracked per email; the rest are sent as written. Far above any real
 * email's (a newsletter has tens to a few hundred), and it bounds what one
 * send costs: 20 emails of 51,000 links each (2 MB of `<a>`) signed a
 * million tokens and kept the event loop over 100 ms for seconds at a time
 * (11 waits of /health over 100 ms in one bulk; 1 with the bound, the large
 * body's parse).
 */
export const MAX_TRACKED_LINKS = 1_000;

export interface ClickTracking {
  /**
   * The HTML with its http(s) links rewritten to click-tracking URLs of
   * `emailId`; `links`: the links of `html`, when already found.
   */
  trackLinks(html: string, emailId: string, links?: PackedLinks): Promise<string>;
  /**
   * The click-tracking URL of one link of `emailId` (the decoded href), or
   * undefined to leave it alone: what trackLinks does to each link. A
   * built-in template's links are tracked this way as they are rendered.
   */
  link(emailId: string, href: string): string | undefined;
  /** What a click token stands for, expired or not; undefined when Mailroom did not sign it (never redirect then). */
  verify(token: unknown): ClickTarget | undefined;
}

export function createClickTracking(options: {
  secret: string;
  publicBaseUrl: string;
  /** How long a rewritten link redirects (CLICK_LINK_LIFETIME_DAYS); default 365 days. */
  lifetimeMs?: number;
}): ClickTracking {
  const tokens = clickTokens(options.secret, options.lifetimeMs ? { lifetimeMs: options.lifetimeMs } : {});
  const prefix = `${options.publicBaseUrl}${CLICK_PATH}`;
  const link = (emailId: string, href: string) => {
    if (href.trim().startsWith(prefix)) return undefined;
    const token = tokens.sign(emailId, href);
    return token === undefined ? undefined : `${prefix}${token}`;
  };
  return {
    trackLinks(html, emailId, links) {
      let tracked = 0;
      const first = (href: string) => {
        if (tracked >= MAX_TRACKED_LINKS) return undefined;
        const url = link(emailId, href);
        if (url !== undefined) tracked++;
        return url;
      };
      return rewriteLinks(html, first, links && unpackLinks(links));
    },
    link,
    verify: (token) => tokens.verify(token),
  };
}
