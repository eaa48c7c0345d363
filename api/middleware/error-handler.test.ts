import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { useEmailApp } from '../../test/support/email-app.ts';

/** What the router leaves unanswered, in the error shape, over HTTP. */
describe('unrouted requests', () => {
  const app = useEmailApp();

  it('an unknown path is 404 { success: false, error: "not found" }', async () => {
    for (const path of ['/nope', '/dev', '/dev/inbox', '/api/email', '/api/keys/x/y']) {
      const res = await app.get(path);
      assert.equal(res.status, 404, path);
      assert.deepEqual(res.body, { success: false, error: 'not found' });
    }
  });

  it('a method the path does not serve is 405 with Allow', async () => {
    const res = await app.request('PUT', '/api/email/send', {});
    assert.equal(res.status, 405);
    assert.ok(res.headers.get('allow')?.includes('POST'));
    assert.deepEqual(res.body, { success: false, error: 'method not allowed' });
  });
});
