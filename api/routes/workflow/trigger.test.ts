import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { WorkflowHarness } from '../../../test/support/workflow-harness.ts';
import { createApp } from '../../app.ts';
import { createLogger } from '../../../core/logger.ts';
import { httpClient } from '../../../test/support/http.ts';
import { serve } from '../../../test/support/serve.ts';

/**
 * POST /api/workflow/:workflowName against the real Temporal server. Runs
 * started here stay on a task queue no worker polls, so nothing executes:
 * these tests look at what the gateway accepts and what it starts.
 */
const h = new WorkflowHarness();
before(() => h.start());
after(() => h.stop());

/** An EIN body naming the harness's own caller (a body naming anyone else is refused: 403). */
const ein = () => ({
  userId: h.caller.userId,
  companyId: h.caller.companyId,
  organizationId: h.caller.organizationId,
  emailAction: 'ein-verified',
  recipients: ['owner@example.com'],
});

describe('POST /api/workflow/:workflowName', () => {
  it('starts a run and answers 202 with its runId and the workflow name', async () => {
    const res = await h.trigger('send-welcome-email', { userId: 'u-1' });
    assert.equal(res.status, 202);
    assert.equal(res.body['success'], true);
    assert.equal(res.body['workflowName'], 'send-welcome-email');
    const runId = res.body['runId'] as string;
    assert.match(runId, /^send-welcome-email-[0-9a-f-]{36}$/);
    const desc = await h.temporal.workflow.getHandle(runId).describe();
    assert.equal(desc.type, 'sendWelcomeEmail');
    assert.equal(desc.taskQueue, h.taskQueue);
    await h.temporal.workflow.getHandle(runId).terminate('test cleanup');
  });

  it('answers 404 naming an unknown workflow', async () => {
    const res = await h.trigger('send-goodbye-email', { userId: 'u-1' });
    assert.equal(res.status, 404);
    assert.deepEqual(res.body, { success: false, error: "workflow 'send-goodbye-email' not found" });
  });

  it('lists every missing required field (canonical names) and starts nothing', async () => {
    // The identity ids are required like the rest, though the headers name the caller.
    const res = await h.trigger('send-email-received-ein', { recipients: ['a@example.com'] });
    assert.equal(res.status, 400);
    assert.deepEqual(res.body, {
      success: false,
      error: 'missing required fields: userId, companyId, organizationId, emailAction',
    });
    const welcome = await h.trigger('send-welcome-email', {});
    assert.deepEqual(welcome.body, { success: false, error: 'missing required fields: userId' });
  });

  it('rejects wrong types, bad addresses and non-object bodies with a clear 400', async () => {
    const cases: Array<[unknown, string]> = [
      [{ userId: 42 }, 'userId must be a string'],
      [{ userId: '' }, 'userId must not be empty'],
      [[{ userId: 'u' }], 'request body must be a JSON object'],
    ];
    for (const [body, error] of cases) {
      const res = await h.trigger('send-welcome-email', body);
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.deepEqual(res.body, { success: false, error });
    }
    const einCases: Array<[Record<string, unknown>, string]> = [
      [{ recipients: 'owner@example.com' }, 'recipients must be an array'],
      [{ recipients: [] }, 'recipients must contain at least 1 item(s)'],
      [{ recipients: ['not-an-address'] }, 'recipients[0] must be a valid email address'],
      [{ ccs: ['ok@example.com', 'nope'] }, 'ccs[1] must be a valid email address'],
      [{ organizationId: 'acme' }, 'organizationId must be a UUID'],
      // The shape is checked before whether the ids are the caller's (a 403).
      [{ companyId: 'acme' }, 'companyId must be a UUID'],
      [{ userId: null }, 'userId must be a string'],
      [
        { recipients: Array.from({ length: 51 }, (_, i) => `r${i}@example.com`) },
        'recipients must contain at most 50 item(s)',
      ],
      [
        { ccs: Array.from({ length: 51 }, (_, i) => `c${i}@example.com`) },
        'ccs must contain at most 50 item(s)',
      ],
      [{ organization_id: '123' }, 'organizationId must be a UUID'],
    ];
    for (const [patch, error] of einCases) {
      const body = { ...ein(), ...patch };
      if ('organization_id' in patch) delete (body as Record<string, unknown>)['organizationId'];
      const res = await h.trigger('send-email-received-ein', body);
      assert.equal(res.status, 400, JSON.stringify(patch));
      assert.deepEqual(res.body, { success: false, error });
    }
  });

  it('bounds every string field: an oversized or control-character value is a 400, never a 500', async () => {
    const welcome: Array<[unknown, string]> = [
      [{ userId: 'u'.repeat(2_100) }, 'userId must be at most 200 characters'],
      [{ userId: 'u-\u0000' }, 'userId must not contain control characters'],
      [{ userId: 'u-\r\nX-Injected: 1' }, 'userId must not contain control characters'],
    ];
    for (const [body, error] of welcome) {
      const res = await h.trigger('send-welcome-email', body);
      assert.deepEqual(
        [res.status, res.body],
        [400, { success: false, error }],
        JSON.stringify(body).slice(0, 80),
      );
    }
    // 200 characters, the bound, is accepted.
    const atBound = await h.trigger('send-welcome-email', { userId: 'u'.repeat(200) });
    assert.equal(atBound.status, 202);
    await h.temporal.workflow.getHandle(String(atBound.body['runId'])).terminate('test cleanup');

    const einCases: Array<[Record<string, unknown>, string]> = [
      [{ recipientName: 'G'.repeat(201) }, 'recipientName must be at most 200 characters'],
      [{ recipientName: 'Grace\u0000' }, 'recipientName must not contain control characters'],
      [{ resource_id_ref: 'r'.repeat(201) }, 'resource_id_ref must be at most 200 characters'],
      [{ resource_id_ref: 'ein\t42' }, 'resource_id_ref must not contain control characters'],
      [{ organizationId: `urn:uuid:${randomUUID()}` }, 'organizationId must be at most 36 characters'],
    ];
    for (const [patch, error] of einCases) {
      const res = await h.trigger('send-email-received-ein', { ...ein(), ...patch });
      assert.deepEqual(
        [res.status, res.body],
        [400, { success: false, error }],
        JSON.stringify(patch).slice(0, 80),
      );
    }
  });

  it('checks recipients as a send would: length, blocked domains, 50 in to and cc together', async () => {
    // 307 characters: accepted at the trigger before, then the run's send refused it.
    const long = `${'a'.repeat(64)}@${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(63)}.${'e'.repeat(46)}.com`;
    assert.equal(long.length, 307);
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ recipients: [long] }, 'recipients[0] must be at most 254 characters'],
      [
        { recipients: ['owner@example.com', 'cfo@mail.blocked.example'] },
        'recipients[1] is in a blocked domain: emails to this domain are not allowed',
      ],
      [
        { ccs: ['cfo@BLOCKED.example'] },
        'ccs[0] is in a blocked domain: emails to this domain are not allowed',
      ],
      [
        {
          recipients: Array.from({ length: 30 }, (_, i) => `r${i}@example.com`),
          ccs: Array.from({ length: 21 }, (_, i) => `c${i}@example.com`),
        },
        'recipients and ccs must contain at most 50 addresses together',
      ],
    ];
    for (const [patch, error] of cases) {
      const res = await h.trigger('send-email-received-ein', { ...ein(), ...patch });
      assert.deepEqual(
        [res.status, res.body],
        [400, { success: false, error }],
        JSON.stringify(patch).slice(0, 80),
      );
    }
  });

  it('answers 400 listing the accepted values for an unknown emailAction', async () => {
    const res = await h.trigger('send-email-received-ein', { ...ein(), emailAction: 'ein-exploded' });
    assert.equal(res.status, 400);
    assert.deepEqual(res.body, {
      success: false,
      error: 'emailAction must be one of: ein-received, ein-verified, ein-rejected',
    });
  });

  it('answers 400 for malformed JSON', async () => {
    const res = await h.request('POST', '/api/workflow/send-welcome-email', '{"userId":', {
      'content-type': 'application/json',
    });
    assert.deepEqual([res.status, res.body], [400, { success: false, error: 'malformed JSON body.' }]);
  });

  it('answers 400 naming the key for valid JSON with a __proto__ key (never "malformed")', async () => {
    for (const body of ['{"__proto__":{"userId":"x"}}', '{"userId":"u","x":[{"__proto__":null}]}']) {
      const res = await h.request('POST', '/api/workflow/send-welcome-email', body, {
        'content-type': 'application/json',
      });
      assert.deepEqual(
        [res.status, res.body],
        [400, { success: false, error: 'request body must not contain a __proto__ key.' }],
        body,
      );
    }
  });

  it('normalizes snake_case keys to camelCase before the run starts and drops unknown keys', async () => {
    const id = ein();
    const res = await h.trigger('send-email-received-ein', {
      user_id: id.userId,
      company_id: id.companyId,
      organization_id: id.organizationId,
      email_action: 'ein-received',
      recipient_name: 'Grace',
      recipients: id.recipients,
      resource_id_ref: 'ein-9',
      ccs: ['cfo@example.com'],
      debug: true,
    });
    assert.equal(res.status, 202);
    const handle = h.temporal.workflow.getHandle(res.body['runId'] as string);
    const { events } = await handle.fetchHistory();
    const started = events?.[0]?.workflowExecutionStartedEventAttributes;
    const payload = started?.input?.payloads?.[0]?.data;
    assert.ok(payload);
    assert.deepEqual(JSON.parse(Buffer.from(payload).toString('utf8')), {
      userId: id.userId,
      companyId: id.companyId,
      organizationId: id.organizationId,
      emailAction: 'ein-received',
      recipientName: 'Grace',
      recipients: id.recipients,
      resource_id_ref: 'ein-9',
      ccs: ['cfo@example.com'],
    });
    await handle.terminate('test cleanup');
  });

  it('refuses both spellings of a key with different values', async () => {
    const res = await h.trigger('send-email-received-ein', { ...ein(), user_id: randomUUID() });
    assert.equal(res.status, 400);
    assert.deepEqual(res.body, { success: false, error: 'conflicting fields: user_id and userId' });
  });

  it('carries the caller identity headers as the run memo', async () => {
    const caller = { companyId: randomUUID(), organizationId: randomUUID(), userId: randomUUID() };
    const res = await h.trigger(
      'send-welcome-email',
      { userId: 'u-memo' },
      {
        'X-Company-Id': caller.companyId,
        'X-Organization-Id': caller.organizationId,
        'X-User-Id': caller.userId,
      },
    );
    const handle = h.temporal.workflow.getHandle(res.body['runId'] as string);
    const desc = await handle.describe();
    assert.deepEqual(desc.memo?.['caller'], caller);
    await handle.terminate('test cleanup');
  });

  it('behind a trusted proxy, needs all three identity headers on every verb, as a protected send does', async () => {
    const whole = {
      'x-company-id': randomUUID(),
      'x-organization-id': randomUUID(),
      'x-user-id': randomUUID(),
    };
    const started = await h.trigger('send-welcome-email', { userId: `user-${randomUUID()}` }, whole);
    assert.equal(started.status, 202, JSON.stringify(started.body));
    const path = `/api/workflow/send-welcome-email?runId=${String(started.body['runId'])}`;
    for (const missing of Object.keys(whole)) {
      const partial: Record<string, string> = { ...whole, [missing]: '' };
      for (const answer of [
        await h.trigger('send-welcome-email', { userId: 'u' }, partial),
        await h.request('GET', path, undefined, partial),
        await h.request('DELETE', path, undefined, partial),
      ]) {
        assert.equal(answer.status, 401, missing);
        assert.deepEqual(answer.body, { success: false, error: 'unauthorized' });
      }
    }
    assert.equal((await h.request('GET', path, undefined, whole)).status, 200);
  });

  it('refuses identity headers that are not UUIDs (401) and oversized Idempotency-Keys (400)', async () => {
    const long = 'x'.repeat(256);
    const header = await h.trigger('send-welcome-email', { userId: 'u' }, { 'X-Company-Id': long });
    assert.equal(header.status, 401);
    assert.deepEqual(header.body, { success: false, error: 'unauthorized' });
    const key = await h.trigger('send-welcome-email', { userId: 'u' }, { 'Idempotency-Key': long });
    assert.equal(key.status, 400);
    assert.deepEqual(key.body, {
      success: false,
      error: 'Idempotency-Key must be one header of 1 to 255 printable ASCII characters.',
    });
  });

  it('with an Idempotency-Key, returns the same runId and starts nothing new, even after the run closed', async () => {
    const key = randomUUID();
    const first = await h.trigger('send-welcome-email', { userId: 'u-idem' }, { 'Idempotency-Key': key });
    assert.equal(first.status, 202);
    const runId = first.body['runId'] as string;
    assert.match(runId, /^send-welcome-email-[0-9a-f]{40}$/);
    const handle = h.temporal.workflow.getHandle(runId);
    const { runId: temporalRunId } = await handle.describe();

    const again = await h.trigger('send-welcome-email', { userId: 'u-idem' }, { 'Idempotency-Key': key });
    assert.equal(again.status, 202);
    assert.equal(again.body['runId'], runId);
    assert.equal((await handle.describe()).runId, temporalRunId);

    await handle.terminate('closed before the retry');
    const afterClose = await h.trigger(
      'send-welcome-email',
      { userId: 'u-idem' },
      { 'Idempotency-Key': key },
    );
    assert.equal(afterClose.status, 202);
    assert.equal(afterClose.body['runId'], runId);
    const desc = await handle.describe();
    assert.equal(desc.runId, temporalRunId);
    assert.equal(desc.status.name, 'TERMINATED');

    // The same key from another company is another trigger.
    const other = await h.trigger(
      'send-welcome-email',
      { userId: 'u-idem' },
      {
        'Idempotency-Key': key,
        'X-Company-Id': randomUUID(),
      },
    );
    assert.notEqual(other.body['runId'], runId);
    await h.temporal.workflow.getHandle(other.body['runId'] as string).terminate('test cleanup');
  });

  it('answers 500 with the cause when Temporal is unreachable', async () => {
    // No retry interceptor: the refused connection surfaces at once instead of after the deadline.
    const connection = Connection.lazy({ address: '127.0.0.1:1', interceptors: [] });
    const temporal = new Client({ connection });
    const logger = createLogger('test', h.config);
    const server = await serve(createApp({ ...h, logger, db: h.database.db, temporal }));
    try {
      const res = await httpClient(server.url, h.identityHeaders).post('/api/workflow/send-welcome-email', {
        userId: 'u-1',
      });
      assert.equal(res.status, 500);
      assert.equal(res.body['success'], false);
      // The gRPC error under the SDK's "Failed to start Workflow" wrapper.
      assert.match(
        String(res.body['error']),
        /^failed to start workflow: 14 UNAVAILABLE: .*ECONNREFUSED 127\.0\.0\.1:1\b/,
      );
    } finally {
      await server.close();
      await connection.close().catch(() => undefined);
    }
  });
});
