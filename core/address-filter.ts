/**
 * What every server-side request Mailroom makes to an address a caller chose
 * (attachment URLs, webhook endpoints) refuses besides what
 * request-filtering-agent refuses itself (private, loopback, link-local,
 * metadata and other reserved ranges).
 */

/**
 * IPv4-compatible IPv6 addresses (`::a.b.c.d`, deprecated by RFC 4291):
 * ipaddr.js, and so request-filtering-agent, calls them unicast, though they
 * carry an IPv4 address that a stack or a tunnel may route to, `::127.0.0.1`
 * included. Never public.
 */
export const IPV4_COMPATIBLE = '::/96';

/** request-filtering-agent's options: the addresses an operator (or a test) let through, and the ranges always refused. */
export function addressFilter(allowed: readonly string[]): {
  allowIPAddressList: string[];
  denyIPAddressList: string[];
} {
  return { allowIPAddressList: [...allowed], denyIPAddressList: [IPV4_COMPATIBLE] };
}
