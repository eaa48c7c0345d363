import { domainToASCII } from 'node:url';
import ipaddr from 'ipaddr.js';

/**
 * What the signup rate limits count (signup-limits.ts): one mailbox, and one
 * client network, however a caller spells them. Otherwise `Victim@`,
 * `victim+1@` and `v.ictim@gmail.com` would each get a fresh budget for the
 * same inbox, and a client with an IPv6 /64 (every home line has one) would
 * have 2^64 addresses to rotate through.
 */

/** Providers that ignore dots in the local part, and the domain each is known by. */
const DOTLESS_PROVIDERS: Readonly<Record<string, string>> = {
  'gmail.com': 'gmail.com',
  'googlemail.com': 'gmail.com',
};

/**
 * The mailbox an address reaches: lower case (no common provider tells
 * `Victim` from `victim`), without a `+tag` (subaddressing, at every domain:
 * counting two mailboxes of a domain without it as one is the safe mistake),
 * without dots in the local part where the provider ignores them, and the
 * domain in its ASCII (punycode) form.
 */
export function canonicalMailbox(address: string): string {
  const at = address.lastIndexOf('@');
  if (at < 0) return address.toLowerCase();
  let local = address.slice(0, at).toLowerCase();
  const written = address.slice(at + 1).toLowerCase();
  let domain = domainToASCII(written) || written;
  if (domain.endsWith('.')) domain = domain.slice(0, -1);
  const plus = local.indexOf('+');
  if (plus > 0) local = local.slice(0, plus);
  const provider = DOTLESS_PROVIDERS[domain];
  if (provider !== undefined) {
    local = local.replaceAll('.', '');
    domain = provider;
  }
  return `${local}@${domain}`;
}

/** Bits of an IPv6 address that name one client's network (RFC 6177: a site gets at least a /64). */
const IPV6_CLIENT_PREFIX = 64;

/**
 * The network a client address stands for: IPv4 addresses as they are (an
 * IPv4-mapped IPv6 address, `::ffff:203.0.113.9`, is its IPv4 address), IPv6
 * addresses by their /64, and every loopback address (127.0.0.0/8, `::1`) as
 * one host. Anything unparseable is counted as written.
 */
export function clientNetwork(ip: string): string {
  let address: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    address = ipaddr.process(ip);
  } catch {
    return ip;
  }
  if (address.range() === 'loopback') return 'loopback';
  if (address.kind() === 'ipv4') return address.toString();
  const bytes = address.toByteArray().map((byte, i) => (i < IPV6_CLIENT_PREFIX / 8 ? byte : 0));
  return `${ipaddr.fromByteArray(bytes).toString()}/${IPV6_CLIENT_PREFIX}`;
}
