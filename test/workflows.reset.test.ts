/**
 * An operator's Reset (Temporal Web UI "Reset", `temporal workflow reset
 * --type FirstWorkflowTask`) of a run, done here with Temporal's reset API on
 * the real server: a run whose email the provider never took sends it once,
 * under the same email record; a completed run sends nothing more; a run
 * whose email may have gone out (outcome unknown) is not resent and says why.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { WorkflowHarness } from './support/workflow-harness.ts';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { temporalAddress, temporalNamespace } from './support/env.ts';
import { operatorCommand } from './support/operator-cli.ts';
import { createDailyQuotas } from '../core/email/send/quotas/daily-quota.ts';
import { welcomeBody } from './support/sample-emails.ts';
import { resetToFirstTask } from './support/reset-run.ts';

const h = new WorkflowHarness();
before(async () => {
  await h.start();
  await h.startWorker();
});
after(() => h.stop());

const EIN = 'send-email-received-ein';
const WELCOME = 'send-welcome-email';

interface StoredEmail {
  _id: string;
  status_rank: number;
  error_kind: string | null;
  error?: string | null;
  resends?: number;
}
const emails = () => h.database.db.collection<StoredEmail>('emails');
const users = () => h.database.db.collection<{ _id: string; welcomeEmailSent?: boolean }>('users');

/** Resets the run to its first workflow task, as the Web UI's Reset does; answers the new run's id. */
const reset = (workflowId: string) => resetToFirstTask(h.temporal, workflowId);

/** Waits for the workflow's current run (the reset one) to reach `status`. */
async function currentRun(
  name: string,
  workflowId: string,
  newRunId: string,
  status: string,
  headers: Record<string, string> = {},
) {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    const desc = await h.temporal.workflow.getHandle(workflowId).describe();
    if (desc.runId === newRunId && desc.status.name !== 'RUNNING') break;
    await new Promise((r) => setTimeout(r, 200));
  }
  return h.waitForStatus(name, workflowId, status, 20_000, headers);
}

async function einRun(recipient: string) {
  const { status, body } = await h.trigger(EIN, {
    userId: h.caller.userId,
    companyId: h.caller.companyId,
    organizationId: h.caller.organizationId,
    emailAction: 'ein-received',
    recipients: [recipient],
  });
  assert.equal(status, 202);
  return body['runId'] as string;
}

const recordFor = (workflowId: string, step: string) =>
  emails().findOne({ idempotency_key: `${workflowId}:${step}` } as never);

describe('reset of a send-email-received-ein run', () => {
  it('whose email the provider never took: sends it once, and the same record ends sent', async () => {
    h.fake.reset();
    h.fake.plan(400); // the provider refuses it (as it would while a sender is unverified)
    const runId = await einRun(`reset-${randomUUID()}@example.com`);
    await h.waitForStatus(EIN, runId, 'failed');
    const failed = await recordFor(runId, 'ein-email');
    assert.equal(failed?.status_rank, 5, 'record failed');
    assert.equal(h.fake.accepted.length, 0);

    const newRun = await reset(runId);
    const run = await currentRun(EIN, runId, newRun, 'completed');
    assert.equal(run.result?.result['emailId'], failed?._id, 'the same email record');
    assert.equal(h.fake.accepted.length, 1, 'sent once');
    const after = await recordFor(runId, 'ein-email');
    assert.equal(after?.status_rank, 1, 'record sent');
    assert.equal(after?.resends, 1);

    // The runs list shows the run once, as its status answer does: completed, no longer failed.
    const listedAs = async (query: string) => {
      const { body } = await h.request('GET', `/api/workflow/${EIN}/runs?limit=100${query}`);
      return (body['runs'] as Array<Record<string, unknown>>).filter((r) => r['runId'] === runId);
    };
    let items: Array<Record<string, unknown>> = [];
    for (let i = 0; i < 50 && items.length !== 1; i++) {
      items = await listedAs(''); // visibility is eventually consistent
      if (items.length !== 1) await new Promise((r) => setTimeout(r, 200));
    }
    assert.equal(items.length, 1, JSON.stringify(items));
    assert.equal(items[0]!['status'], 'completed');
    assert.equal(items[0]!['createdAt'], run.createdAt);
    assert.equal(items[0]!['updatedAt'], run.updatedAt);
    assert.deepEqual(await listedAs('&status=failed'), []);
  });

  it('whose recipient was suppressed since: sends nothing, and the run says why', async () => {
    h.fake.reset();
    h.fake.plan(400);
    const recipient = `reset-suppressed-${randomUUID()}@example.com`;
    const runId = await einRun(recipient);
    await h.waitForStatus(EIN, runId, 'failed');
    // The address bounced, unsubscribed or complained before the operator's reset.
    const added = await h.request('POST', '/api/email/suppressions', { email: recipient });
    assert.equal(added.status, 201, JSON.stringify(added.body));
    const received = h.fake.received.length;

    const newRun = await reset(runId);
    const run = await currentRun(EIN, runId, newRun, 'failed');
    assert.match(run.error ?? '', /^all recipients are suppressed: /);
    assert.equal(h.fake.received.length, received, 'no request reached the provider');
    assert.equal((await recordFor(runId, 'ein-email'))?.error_kind, 'suppressed');
  });

  it("counts against the company's daily limit: refused at the limit, counted once sent", async () => {
    const company = randomUUID();
    const caller = { 'x-company-id': company };
    const usedToday = async () => {
      const { body } = await h.request('GET', '/api/email/quota', undefined, caller);
      return (body['data'] as Record<string, unknown>)['used_today'];
    };
    const failedRun = async () => {
      h.fake.reset();
      h.fake.plan(400);
      const { status, body } = await h.trigger(
        EIN,
        {
          userId: h.caller.userId,
          companyId: company,
          organizationId: h.caller.organizationId,
          emailAction: 'ein-received',
          recipients: [`reset-quota-${randomUUID()}@example.com`],
        },
        caller,
      );
      assert.equal(status, 202, JSON.stringify(body));
      const runId = body['runId'] as string;
      await h.waitForStatus(EIN, runId, 'failed', 20_000, caller);
      return runId;
    };
    await createDailyQuotas(h.database.db).setLimit(company, 2);
    const first = await failedRun();
    // Refused by the provider: the send was given back.
    assert.equal(await usedToday(), 0);

    // With room: the reset's email is counted when it is sent.
    let newRun = await reset(first);
    await currentRun(EIN, first, newRun, 'completed', caller);
    assert.equal(await usedToday(), 1);

    // At the limit: the reset's email is refused as any send would be.
    const second = await failedRun();
    const direct = await h.request('POST', '/api/email/send', welcomeBody({ to: 'x@example.com' }), caller);
    assert.equal(direct.status, 200, JSON.stringify(direct.body));
    assert.equal(await usedToday(), 2);
    const received = h.fake.received.length;
    newRun = await reset(second);
    const run = await currentRun(EIN, second, newRun, 'failed', caller);
    assert.equal(run.error, 'daily sending limit reached.');
    assert.equal(h.fake.received.length, received, 'nothing sent over the limit');
    assert.equal(await usedToday(), 2);
    const record = await recordFor(second, 'ein-email');
    assert.equal(record?.status_rank, 5, 'the record failed again, not left pending');
  });

  it('that completed: sends no second email', async () => {
    h.fake.reset();
    const runId = await einRun(`reset-${randomUUID()}@example.com`);
    // An operator finds the run with the CLI `npm run temporal` provisions and points at the server.
    const { stdout } = await promisify(execFile)(
      'npx',
      ['tsx', 'infra/temporal-cli.ts', 'workflow', 'describe', '--workflow-id', runId, '--output', 'json'],
      {
        env: { ...process.env, TEMPORAL_ADDRESS: temporalAddress(), TEMPORAL_NAMESPACE: temporalNamespace() },
      },
    ).catch((err: unknown) => ({ stdout: String((err as { stderr?: string }).stderr ?? err) }));
    await h.waitForStatus(EIN, runId, 'completed');
    assert.match(stdout, new RegExp(`"workflowId": "${runId}"`));
    const done = await h.waitForStatus(EIN, runId, 'completed');
    const newRun = await reset(runId);
    const run = await currentRun(EIN, runId, newRun, 'completed');
    assert.equal(run.result?.result['emailId'], done.result?.result['emailId']);
    // Created when the POST created it: a reset does not move its creation time.
    assert.equal(run.createdAt, done.createdAt);
    assert.equal(h.fake.received.length, 1, 'one request to the provider in all');
  });

  it('whose email may have gone out (outcome unknown): is not resent and says why', async () => {
    h.fake.reset();
    h.fake.plan(400);
    const runId = await einRun(`reset-${randomUUID()}@example.com`);
    await h.waitForStatus(EIN, runId, 'failed');
    // What an attempt that saw no answer leaves once its wait for events ends.
    await emails().updateOne({ idempotency_key: `${runId}:ein-email` } as never, {
      $set: { error_kind: 'outcome_unknown', error: 'email outcome unknown: the provider may have it.' },
    });
    const received = h.fake.received.length;

    const newRun = await reset(runId);
    const run = await currentRun(EIN, runId, newRun, 'failed');
    assert.match(run.error ?? '', /outcome unknown/);
    assert.equal(h.fake.received.length, received, 'no request reached the provider');
  });
});

describe('reset of a send-welcome-email run', () => {
  async function newUser() {
    const _id = `user-${randomUUID()}`;
    await h.insertUser({ _id, email: `${_id}@example.com`, name: 'Ada Lovelace' });
    return _id;
  }

  /** A new user's welcome run whose email the provider refused: the run failed, its record too. */
  async function refusedWelcomeRun() {
    h.fake.reset();
    h.fake.plan(400);
    const userId = await newUser();
    const { body } = await h.trigger(WELCOME, { userId });
    const runId = body['runId'] as string;
    await h.waitForStatus(WELCOME, runId, 'failed');
    const failed = await recordFor(runId, 'welcome-email');
    assert.equal(failed?.status_rank, 5);
    return { userId, runId, failed: failed! };
  }

  it('whose email the provider never took: sends it once, flags the user, same record', async () => {
    const { userId, runId, failed } = await refusedWelcomeRun();

    const newRun = await reset(runId);
    const run = await currentRun(WELCOME, runId, newRun, 'completed');
    assert.equal(run.result?.result['message'], 'welcome email sent');
    assert.equal(run.result?.result['emailId'], failed._id);
    assert.equal(h.fake.accepted.length, 1);
    assert.equal((await users().findOne({ _id: userId }))?.welcomeEmailSent, true);
  });

  it("after the user's address was corrected: sends to the new address, and the record names it", async () => {
    const { userId, runId, failed } = await refusedWelcomeRun();
    const corrected = `corrected-${randomUUID()}@example.com`;
    await h.database.db
      .collection<{ _id: string; email: string; name: string }>('users')
      .updateOne({ _id: userId }, { $set: { email: corrected, name: 'Ada King' } });

    const newRun = await reset(runId);
    await currentRun(WELCOME, runId, newRun, 'completed');
    assert.equal(h.fake.accepted.length, 1);
    assert.equal(h.fake.accepted[0]?.body.personalizations[0]?.to[0]?.email, corrected);
    const status = await h.request('GET', `/api/email/status/${failed._id}`);
    const data = status.body['data'] as Record<string, unknown>;
    assert.deepEqual(
      [data['status'], data['recipient_email'], data['recipient_name']],
      ['sent', corrected, 'Ada King'],
    );
  });

  it('whose email may have gone out: a new run sends nothing until an operator confirms it never went out', async () => {
    const { userId, failed: record } = await refusedWelcomeRun();
    // What an attempt that saw no answer leaves once its wait for events ends.
    await emails().updateOne(
      { _id: record._id },
      {
        $set: { error_kind: 'outcome_unknown', error: 'email outcome unknown: the provider may have it.' },
      },
    );
    const received = h.fake.received.length;
    const unsure = (await h.trigger(WELCOME, { userId })).body['runId'] as string;
    const refused = await h.waitForStatus(WELCOME, unsure, 'failed');
    assert.match(refused.error ?? '', /outcome unknown/);
    assert.equal(h.fake.received.length, received, 'nothing resent while it may have gone out');

    // The operator finds it missing from the provider's activity feed and says so.
    const emailsCli = (...args: string[]) => operatorCommand('emails-cli.ts', h.mongoUriForChild(), args);
    const confirmed = await emailsCli('not-sent', '--email', record._id);
    assert.equal(confirmed.code, 0, confirmed.out);
    assert.match(confirmed.out, /recorded as never taken by the provider/);
    const again = await emailsCli('not-sent', '--email', record._id);
    assert.equal(again.code, 1);
    assert.match(again.out, /not failed with an unknown outcome/);

    const sent = (await h.trigger(WELCOME, { userId })).body['runId'] as string;
    const run = await h.waitForStatus(WELCOME, sent, 'completed');
    assert.equal(run.result?.result['message'], 'welcome email sent');
    assert.equal(h.fake.accepted.length, 1, 'sent once');
    assert.equal((await users().findOne({ _id: userId }))?.welcomeEmailSent, true);
  });

  it('that completed: sends no second email', async () => {
    h.fake.reset();
    const userId = await newUser();
    const { body } = await h.trigger(WELCOME, { userId });
    const runId = body['runId'] as string;
    await h.waitForStatus(WELCOME, runId, 'completed');
    const newRun = await reset(runId);
    const run = await currentRun(WELCOME, runId, newRun, 'completed');
    assert.equal(run.result?.result['message'], 'welcome email already sent');
    assert.equal(h.fake.received.length, 1);
  });
});

describe('a run cancelled while its email step waits to retry', () => {
  const RUN_CANCELLED = 'cancelled: its workflow run was cancelled before the provider took the email.';

  /** Starts a run while the provider answers 503, and cancels it between two attempts. */
  async function cancelledBetweenAttempts(name: string, body: Record<string, unknown>, step: string) {
    h.fake.reset();
    h.fake.outage = 503;
    const runId = (await h.trigger(name, body)).body['runId'] as string;
    // Two refused attempts: the step now waits 2 s before its third.
    await h.fake.waitForRequests(2, 20_000);
    assert.equal(h.fake.received.length, 2, 'two attempts refused');
    const cancel = await h.request('DELETE', `/api/workflow/${name}?runId=${encodeURIComponent(runId)}`);
    assert.equal(cancel.status, 202);
    await h.waitForStatus(name, runId, 'cancelled');
    h.fake.outage = undefined;
    const record = await recordFor(runId, step);
    assert.ok(record, 'the step wrote its record');
    // What the company sees at once, not `pending` until the sweeper's 15 minutes.
    const status = await h.request('GET', `/api/email/status/${record._id}`);
    const data = status.body['data'] as Record<string, unknown>;
    assert.equal(data['status'], 'failed');
    assert.equal(data['error'], RUN_CANCELLED);
    assert.equal(h.fake.accepted.length, 0);
    return { runId, record };
  }

  it('send-email-received-ein: its email ends failed at once; a reset sends it once', async () => {
    const { runId, record } = await cancelledBetweenAttempts(
      EIN,
      {
        userId: h.caller.userId,
        companyId: h.caller.companyId,
        organizationId: h.caller.organizationId,
        emailAction: 'ein-received',
        recipients: [`cancel-${randomUUID()}@example.com`],
      },
      'ein-email',
    );
    const newRun = await reset(runId);
    const run = await currentRun(EIN, runId, newRun, 'completed');
    assert.equal(run.result?.result['emailId'], record._id, 'the same email record');
    assert.equal(h.fake.accepted.length, 1, 'sent once');
  });

  it('send-welcome-email: its email ends failed at once; the next run for the user sends one', async () => {
    const userId = `user-${randomUUID()}`;
    await h.insertUser({ _id: userId, email: `${userId}@example.com`, name: 'Ada' });
    const { record } = await cancelledBetweenAttempts(WELCOME, { userId }, 'welcome-email');
    const next = (await h.trigger(WELCOME, { userId })).body['runId'] as string;
    const run = await h.waitForStatus(WELCOME, next, 'completed');
    assert.equal(run.result?.result['message'], 'welcome email sent');
    // The provider never had the first: the next run's send is a new record (welcome-keys.ts).
    assert.notEqual(run.result?.result['emailId'], record._id);
    assert.equal(h.fake.accepted.length, 1, 'one email in all');
    assert.equal((await emails().findOne({ _id: record._id }))?.status_rank, 5, 'the first stays failed');
    assert.equal((await users().findOne({ _id: userId }))?.welcomeEmailSent, true);
  });
});

describe('a run cancelled while its email is at the provider', () => {
  it('waits for that attempt: sent, the run completes with its emailId (never sent behind cancelled)', async () => {
    h.fake.reset();
    h.fake.delayMs = 1500;
    try {
      const runId = await einRun(`slow-${randomUUID()}@example.com`);
      await h.fake.waitForRequests(1, 20_000);
      assert.equal(h.fake.received.length, 1, 'the attempt is at the provider');
      const cancel = await h.request('DELETE', `/api/workflow/${EIN}?runId=${encodeURIComponent(runId)}`);
      assert.equal(cancel.status, 202);
      const run = await h.waitForStatus(EIN, runId, 'completed');
      const record = await recordFor(runId, 'ein-email');
      assert.equal(run.result?.result['emailId'], record?._id);
      assert.equal(record?.status_rank, 1, 'sent');
      assert.equal(h.fake.accepted.length, 1);
    } finally {
      h.fake.delayMs = 0;
    }
  });

  it('refused by the provider after the cancel: not retried, the email called off, the run cancelled', async () => {
    h.fake.reset();
    h.fake.delayMs = 1500;
    h.fake.outage = 503;
    try {
      const runId = await einRun(`slow-${randomUUID()}@example.com`);
      await h.fake.waitForRequests(1, 20_000);
      const cancel = await h.request('DELETE', `/api/workflow/${EIN}?runId=${encodeURIComponent(runId)}`);
      assert.equal(cancel.status, 202);
      const run = await h.waitForStatus(EIN, runId, 'cancelled');
      assert.equal(run.error, null);
      const record = await recordFor(runId, 'ein-email');
      assert.equal(record?.status_rank, 5, 'failed: called off');
      assert.match(String(record?.error), /^cancelled: /);
      assert.equal(h.fake.received.length, 1, 'no second attempt');
    } finally {
      h.fake.reset();
    }
  });
});
