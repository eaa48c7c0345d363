/** Markup every rendered email shares: attribute escaping and the open-tracking pixel. */

/** Minimal escaping for a double-quoted attribute; keeps `=` readable (Handlebars would write `&#x3D;`). */
export function escapeAttribute(value: string): string {
  return value
    .replace(/&/g, '&amp;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;');
}

/** The exact pixel tag the interface shows: 1×1, empty alt text. */
export function trackingPixelTag(url: string): string {
  return `<img src="${escapeAttribute(url)}" width="1" height="1" alt="">`;
}
