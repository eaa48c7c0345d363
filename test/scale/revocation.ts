import { KEY_CACHE_TTL_MS } from '../../core/api-keys/key-store.ts';
import { Checks, sleep } from '../faults/stack.ts';
import type { ScaleCase } from './case.ts';

/**
 * A key in use on both gateways (each has it in its verified-key cache),
 * revoked through gateway 0: refused there at once and on gateway 1 within
 * KEY_CACHE_TTL_MS (docs/security.md), and refused for good afterwards.
 */

/** Time for one probe to travel (a loaded CI machine). */
const SLACK_MS = 500;

export const revocation: ScaleCase = {
  name: 'a key revoked on one gateway is refused by the other within the cache TTL',
  async run(stack) {
    const check = new Checks();
    const created = await stack.request('POST', '/api/keys', {
      name: 'scale-revoke',
      scopes: ['keys:manage'],
    });
    check.expect(created.status === 201, `key created: ${created.status}`);
    const secret = String(created.body['secret']);
    const id = String((created.body['key'] as Record<string, unknown>)['id']);
    const asKey = stack.headers({ authorization: `Bearer ${secret}` });
    const probe = (via: number) => stack.request('GET', '/api/keys', undefined, { headers: asKey, via });
    // Both gateways verify it and keep it in their caches.
    const warm = await Promise.all([probe(0), probe(1), probe(0), probe(1)]);
    check.expect(
      warm.every((w) => w.status === 200),
      `before: ${warm.map((w) => w.status).join(',')}`,
    );

    const revoked = await stack.request('DELETE', `/api/keys/${id}`, undefined, { via: 0 });
    const at = Date.now();
    check.expect(revoked.status === 200, `revoke answered ${revoked.status}`);
    const same = await probe(0);
    let refusedAfter: number | undefined;
    while (Date.now() - at < KEY_CACHE_TTL_MS * 3) {
      const other = await probe(1);
      if (other.status === 401) {
        refusedAfter = Date.now() - at;
        break;
      }
      await sleep(50);
    }
    // And it stays refused on both, however often it is tried.
    const later = [];
    for (let i = 0; i < 10; i++) later.push((await probe(i % 2)).status);

    check.expect(same.status === 401, `the revoking gateway answered ${same.status}`);
    check.expect(
      refusedAfter !== undefined && refusedAfter <= KEY_CACHE_TTL_MS + SLACK_MS,
      `the other gateway refused it after ${refusedAfter ?? 'never'} ms (cache TTL ${KEY_CACHE_TTL_MS} ms)`,
    );
    check.expect(
      later.every((s) => s === 401),
      `afterwards: ${later.join(',')}`,
    );
    return check.result({
      'revoking gateway': same.status,
      'ms until the other gateway refused it': refusedAfter ?? 'never',
      'cache TTL ms': KEY_CACHE_TTL_MS,
      afterwards: later,
    });
  },
};
