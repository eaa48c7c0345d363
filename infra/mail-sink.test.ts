/**
 * The dev mail sink's behaviours by recipient address, through the real
 * gateway, worker, email core, @sendgrid client and retry policies.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WorkflowHarness } from '../test/support/workflow-harness.ts';
import { until } from '../test/support/until.ts';
import { behaviourOf, startMailSink, type MailSink } from './mail-sink.ts';

/**
 * How long `slow@…` holds a message here: long enough for other sends to
 * arrive through the gateway while one is held, on a loaded machine too.
 */
const SLOW_MS = 1500;

const h = new WorkflowHarness();
const lines: string[] = [];
let sink: MailSink;
let dir: string;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'mailroom-sink-'));
  sink = await startMailSink({ dir, log: (line) => lines.push(line), slowMs: SLOW_MS });
  await h.start({
    SENDGRID_BASE_URL: sink.url,
    AUTH_MODE: 'trusted-headers',
    SENDGRID_WEBHOOK_ALLOW_UNSIGNED: 'true',
  });
  sink.webhookUrl = `${h.baseUrl}/api/email/webhooks/sendgrid`;
  await h.startWorker();
});
after(async () => {
  await h.stop();
  await sink.stop();
  await rm(dir, { recursive: true, force: true });
});

/** The EIN identity: the harness's own caller (a run acts as whoever triggers it). */
const ids = () => ({
  userId: h.caller.userId,
  companyId: h.caller.companyId,
  organizationId: h.caller.organizationId,
});

function send(to: string, id = ids()) {
  return h.request(
    'POST',
    '/api/email/send',
    { to, subject: 'Hello', template_id: 'custom', html_body: '<p>Hello</p>' },
    { 'X-User-Id': id.userId, 'X-Company-Id': id.companyId, 'X-Organization-Id': id.organizationId },
  );
}

describe('dev mail sink behaviours', () => {
  it('reads the behaviour from the local part of any recipient, ignoring a +tag and case', () => {
    const body = (to: string, cc?: string) => ({
      from: { email: 'a@example.com' },
      subject: 's',
      content: [],
      personalizations: [{ to: [{ email: to }], ...(cc ? { cc: [{ email: cc }] } : {}) }],
    });
    assert.equal(behaviourOf(body('Fail-Once+42@example.com')), 'fail-once');
    assert.equal(behaviourOf(body('jane@example.com', 'slow@example.org')), 'slow');
    assert.equal(behaviourOf(body('jane@example.com')), undefined);
    assert.equal(behaviourOf(body('slowpoke@example.com')), undefined);
  });

  it('fail-once: the workflow step is retried by its retry policy and the run completes', async () => {
    const { body } = await h.trigger('send-email-received-ein', {
      ...ids(),
      emailAction: 'ein-verified',
      recipients: ['fail-once@example.com'],
    });
    const runId = body['runId'] as string;
    const run = await h.waitForStatus('send-email-received-ein', runId, 'completed');
    assert.equal(run.result?.result['message'], 'ein email sent');
    const { events } = await h.temporal.workflow.getHandle(runId).fetchHistory();
    const attempts = (events ?? [])
      .map((e) => e.activityTaskStartedEventAttributes?.attempt)
      .filter((a) => a !== undefined && a !== null);
    assert.deepEqual(attempts, [2]); // the first attempt failed with 503; the retry was accepted
    assert.equal(
      lines.filter((l) => l.startsWith('fail-once@example.com: fail-once, answering 503')).length,
      1,
    );
  });

  it('fail-503: a send answers 500 provider unavailable', async () => {
    const res = await send('fail-503@example.com');
    assert.equal(res.status, 500);
    assert.match(String(res.body['error']), /^email provider unavailable: /);
  });

  it('reject: the run fails at once with the rejection (not retried)', async () => {
    const { body } = await h.trigger('send-email-received-ein', {
      ...ids(),
      emailAction: 'ein-received',
      recipients: ['reject@example.com'],
    });
    const run = await h.waitForStatus('send-email-received-ein', body['runId'] as string, 'failed');
    assert.match(String(run.error), /^email provider rejected the message: /);
  });

  it('slow: holds the message, then accepts it', async () => {
    const res = await send('slow+1@example.com');
    assert.equal(res.status, 200);
    assert.ok(lines.includes(`slow+1@example.com: slow, holding it ${SLOW_MS / 1000} s`));
    assert.ok((await readdir(dir)).some((f) => /-slow_1@example\.com-[0-9a-f]+\.html$/.test(f)));
  });

  it('slow: every held message is saved, also when others arrive while it is held', async () => {
    // The audit's case: two held at once, then a third accepted while they are held.
    let slowAnswered = 0;
    const slow = ['slow+2@example.com', 'slow+3@example.com'].map((to) =>
      send(to).finally(() => slowAnswered++),
    );
    await until('both slow messages to be held', () =>
      Promise.resolve(
        lines.includes(`slow+2@example.com: slow, holding it ${SLOW_MS / 1000} s`) &&
          lines.includes(`slow+3@example.com: slow, holding it ${SLOW_MS / 1000} s`),
      ),
    );
    const during = await send('during@example.com');
    assert.equal(during.status, 200);
    assert.equal(slowAnswered, 0, 'during@ was answered while both slow messages were held');
    // Held messages are not in the inbox before their answer.
    assert.deepEqual(
      (await savedMessages()).filter((m) => m.to?.startsWith('slow+') && m.to !== 'slow+1@example.com'),
      [],
    );
    const answers = new Map([
      ['slow+2@example.com', await slow[0]!],
      ['slow+3@example.com', await slow[1]!],
      ['during@example.com', during],
    ]);

    const saved = await savedMessages();
    for (const [to, res] of answers) {
      assert.equal(res.status, 200);
      const mine = saved.filter((m) => m.to === to);
      assert.equal(mine.length, 1, `${to} saved once`);
      // Saved as itself: with the X-Message-Id its own send was answered with.
      assert.ok(res.body['provider_id']);
      assert.equal(mine[0]!.messageId, res.body['provider_id'], `${to} saved with its own message id`);
    }
    assert.deepEqual(
      lines.filter((l) => l.startsWith('could not save')),
      [],
    );
  });

  it('bounce: accepts, then reports a bounce through the webhook and the record ends bounced', async () => {
    const id = ids();
    const res = await send('bounce@example.com', id);
    assert.equal(res.status, 200);
    const emailId = res.body['email_id'] as string;
    const status = await until(
      'the record to be bounced',
      async () => {
        const { body } = await h.request('GET', `/api/email/status/${emailId}`, undefined, {
          'X-User-Id': id.userId,
          'X-Company-Id': id.companyId,
        });
        const data = body['data'] as { status?: string } | undefined;
        return data?.status === 'bounced' ? data.status : undefined;
      },
      15_000,
    );
    assert.equal(status, 'bounced');
  });
});

/** What the sink saved so far (the .json files the dev inbox lists). */
async function savedMessages(): Promise<Array<{ to: string | undefined; messageId: unknown }>> {
  const files = (await readdir(dir)).filter((f) => f.endsWith('.json'));
  return Promise.all(
    files.map(async (f) => {
      const stored = JSON.parse(await readFile(join(dir, f), 'utf8')) as {
        messageId?: unknown;
        personalizations: Array<{ to: Array<{ email: string }> }>;
      };
      return { to: stored.personalizations[0]?.to[0]?.email, messageId: stored.messageId };
    }),
  );
}
