import { lookup } from 'node:dns/promises';
import ipaddr from 'ipaddr.js';
import { IPV4_COMPATIBLE } from '../address-filter.ts';

/** Longest endpoint URL accepted. */
export const ENDPOINT_URL_MAX_LENGTH = 2000;

/**
 * Why an endpoint URL may not be called, or undefined when it may: http(s)
 * only, no credentials in it, and every address its host resolves to public
 * (no loopback, private, link-local, metadata or other special range), unless
 * the operator let that address through (WEBHOOK_ALLOWED_ADDRESSES). Checked
 * when an endpoint is registered or changed; each delivery attempt checks the
 * address it actually connects to again (post-webhook.ts), so a DNS answer
 * that changes later cannot slip a private address in.
 */
export async function endpointUrlProblem(
  raw: string,
  allowed: readonly string[],
): Promise<string | undefined> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'url must be an absolute http(s) URL';
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'url must be an absolute http(s) URL';
  if (url.username || url.password) return 'url must not carry credentials';
  const host = url.hostname.replace(/^\[|\]$/g, '');
  let addresses: string[];
  try {
    addresses = ipaddr.isValid(host) ? [host] : (await lookup(host, { all: true })).map((a) => a.address);
  } catch {
    return 'url host does not resolve';
  }
  const refused = addresses.find((address) => !isPublic(address, allowed));
  return refused === undefined ? undefined : 'url must not point to a private or reserved address';
}

/** A public unicast address, or one the operator allowed (an address or a CIDR). */
export function isPublic(address: string, allowed: readonly string[]): boolean {
  let parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress())
    parsed = (parsed as ipaddr.IPv6).toIPv4Address();
  if (allowed.some((entry) => matches(parsed, entry))) return true;
  if (matches(parsed, IPV4_COMPATIBLE)) return false;
  return parsed.range() === 'unicast';
}

function matches(address: ipaddr.IPv4 | ipaddr.IPv6, entry: string): boolean {
  try {
    const [range, bits] = entry.includes('/')
      ? ipaddr.parseCIDR(entry)
      : [ipaddr.parse(entry), entry.includes(':') ? 128 : 32];
    return range.kind() === address.kind() && address.match(range, bits);
  } catch {
    return false;
  }
}
