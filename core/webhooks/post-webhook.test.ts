import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Webhook } from 'standardwebhooks';
import { WebhookReceiver } from '../../test/support/webhook-receiver.ts';
import { newSecret } from './endpoint-store.ts';
import { createWebhookPoster, signedHeaders } from './post-webhook.ts';
import { endpointUrlProblem, isPublic } from './endpoint-url.ts';

describe('a delivery attempt', () => {
  const receiver = new WebhookReceiver();
  before(() => receiver.start());
  after(() => receiver.stop());

  it('never reaches a private address the operator did not allow, whatever the URL said at registration', async () => {
    const post = createWebhookPoster({ timeoutMs: 2000, allowedAddresses: [] });
    const result = await post(
      receiver.url,
      '{"type":"email.sent"}',
      signedHeaders('msg_1', '{}', [newSecret()]),
    );
    assert.equal(result.status, null);
    assert.equal(result.error, 'refused: the endpoint resolves to a private or reserved address');
    assert.equal(receiver.received.length, 0);
  });

  it('reaches it when allowed, and does not follow redirects', async () => {
    const post = createWebhookPoster({ timeoutMs: 2000, allowedAddresses: ['127.0.0.0/8'] });
    const ok = await post(receiver.url, '{"a":1}', signedHeaders('msg_2', '{"a":1}', [newSecret()]));
    assert.deepEqual(ok, { status: 200, error: null });
    receiver.failNext = 1;
    receiver.failStatus = 302;
    const redirect = await post(receiver.url, '{}', {});
    receiver.failStatus = 503;
    assert.equal(redirect.status, 302);
    assert.match(String(redirect.error), /^HTTP 302/);
  });

  it('carries one signature per signing secret; each verifies alone', () => {
    const [current, previous] = [newSecret(), newSecret()];
    const body = '{"type":"email.opened"}';
    const headers = signedHeaders('msg_abc', body, [current, previous]);
    assert.equal(headers['webhook-signature'].split(' ').length, 2);
    assert.ok(new Webhook(current).verify(body, headers));
    assert.ok(new Webhook(previous).verify(body, headers));
    assert.throws(() => new Webhook(newSecret()).verify(body, headers));
  });
});

describe('endpoint URLs', () => {
  it('are refused for private, loopback, link-local and metadata addresses', async () => {
    for (const url of [
      'http://127.0.0.1/',
      'http://10.0.0.8/',
      'http://192.168.1.1/',
      'http://169.254.169.254/',
      'http://[fd00::1]/',
      'http://[::ffff:127.0.0.1]/',
      // IPv4-compatible (deprecated), which ipaddr.js calls unicast.
      'http://[::127.0.0.1]/',
      'http://[::a9fe:a9fe]/',
    ])
      assert.equal(
        await endpointUrlProblem(url, []),
        'url must not point to a private or reserved address',
        url,
      );
    assert.equal(await endpointUrlProblem('http://8.8.8.8/hook', []), undefined);
    assert.equal(await endpointUrlProblem('http://127.0.0.1/', ['127.0.0.1']), undefined);
    assert.equal(isPublic('10.1.2.3', ['10.0.0.0/8']), true);
  });
});
