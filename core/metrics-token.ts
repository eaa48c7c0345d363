import { createHash, timingSafeEqual } from 'node:crypto';
import { bearerToken } from './bearer.ts';

/**
 * METRICS_TOKEN: whether a scrape's `Authorization` header may read
 * `/metrics` (the gateway's and the worker's). Without a token every scrape
 * may; with one, only `Bearer <token>` (Prometheus' `authorization` option;
 * the scheme's name in any case, as for API keys).
 * Compared as SHA-256 digests in constant time, so neither the token's
 * length nor its prefix leaks through timing.
 */
export function metricsAccess(token: string | undefined): (authorization: string | undefined) => boolean {
  if (token === undefined) return () => true;
  const digest = (value: string) => createHash('sha256').update(value).digest();
  const expected = digest(token);
  return (authorization) => timingSafeEqual(digest(bearerToken(authorization) ?? ''), expected);
}

/** The `WWW-Authenticate` challenge of a refused scrape. */
export const METRICS_CHALLENGE = 'Bearer realm="metrics"';
