import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { MockActivityEnvironment } from '@temporalio/testing';
import { ApplicationFailure } from '@temporalio/activity';
import { loadConfig } from '../core/config.ts';
import { TEST_SECRET } from '../test/support/env.ts';
import { authenticatedAs, type Caller } from '../core/identity.ts';
import { quietSdkLogger } from '../test/support/temporal-runtime.ts';
import { MailroomError } from '../core/errors.ts';
import type { EmailService, SendOptions } from '../core/email/contract.ts';
import { createEmailActivities } from './email.ts';

/** Records what the activities ask of the email core; the core itself is tested with the real thing elsewhere. */
function fakeEmail(fail?: MailroomError) {
  const calls: Array<{ body: Record<string, unknown>; caller: Caller; options: SendOptions | undefined }> =
    [];
  const failed: Array<[string, string]> = [];
  const email = {
    async send(body: unknown, caller: Caller, options?: SendOptions) {
      calls.push({ body: body as Record<string, unknown>, caller, options });
      if (fail) throw fail;
      return { email_id: 'e-1', provider_id: 'p-1', message: 'email sent successfully' };
    },
    async markFailed(key: string, reason: string) {
      failed.push([key, reason]);
    },
  } as unknown as EmailService;
  return { email, calls, failed };
}

const config = loadConfig({
  PUBLIC_BASE_URL: 'https://app.example.com',
  SUPPORT_EMAIL: 'help@example.com',
  MAILROOM_SECRET: TEST_SECRET,
});

describe('email activities', () => {
  it('deliverWelcomeEmail sends `welcome` with USER_NAME, LOGIN_URL and SUPPORT_EMAIL and the given key', async () => {
    const { email, calls } = fakeEmail();
    const acts = createEmailActivities({ email, config });
    const sent = await new MockActivityEnvironment(undefined, { logger: quietSdkLogger() }).run(
      acts.deliverWelcomeEmail,
      {
        idempotencyKey: 'wf-1:welcome-email',
        userId: 'u1',
        email: 'ada@example.com',
        name: 'Ada',
        caller: {},
      },
    );
    assert.deepEqual(sent, { emailId: 'e-1', providerId: 'p-1' });
    assert.equal(calls.length, 1);
    assert.deepEqual(calls[0]!.options, { idempotencyKey: 'wf-1:welcome-email' });
    assert.equal(calls[0]!.body['template_id'], 'welcome');
    assert.equal(calls[0]!.body['subject'], 'Welcome to Mailroom, Ada');
    assert.deepEqual(calls[0]!.body['to'], { email: 'ada@example.com', name: 'Ada' });
    assert.deepEqual(calls[0]!.body['template_data'], {
      USER_NAME: 'Ada',
      LOGIN_URL: 'https://app.example.com/login',
      SUPPORT_EMAIL: 'help@example.com',
    });
  });

  it('deliverWelcomeEmail folds a stored name’s control characters, line breaks and bidi overrides, so the send stays valid', async () => {
    const { email, calls } = fakeEmail();
    const acts = createEmailActivities({ email, config });
    await new MockActivityEnvironment(undefined, { logger: quietSdkLogger() }).run(acts.deliverWelcomeEmail, {
      idempotencyKey: 'wf-4:welcome-email',
      userId: 'u4',
      email: 'ada@example.com',
      name: ' Ada\u0000\r\nBcc: x@example.com\t\u202e ',
      caller: {},
    });
    const { body } = calls[0]!;
    assert.equal(body['subject'], 'Welcome to Mailroom, Ada Bcc: x@example.com');
    assert.deepEqual(body['to'], { email: 'ada@example.com', name: 'Ada Bcc: x@example.com' });
    const long = await new MockActivityEnvironment(undefined, { logger: quietSdkLogger() }).run(
      acts.deliverWelcomeEmail,
      { idempotencyKey: 'k', userId: 'u', email: 'a@example.com', name: `${'N'.repeat(300)}`, caller: {} },
    );
    assert.ok(long);
    const [, second] = calls;
    assert.equal((second!.body['to'] as { name: string }).name.length, 200);
    assert.ok(String(second!.body['subject']).length <= 200);
  });

  it('deliverEinEmail picks the template from emailAction and sends as the input identity', async () => {
    const { email, calls } = fakeEmail();
    const acts = createEmailActivities({ email, config });
    const caller = { companyId: randomUUID(), organizationId: randomUUID(), userId: randomUUID() };
    await new MockActivityEnvironment(undefined, { logger: quietSdkLogger() }).run(acts.deliverEinEmail, {
      idempotencyKey: 'wf-2:ein-email',
      emailAction: 'ein-verified' as const,
      recipients: ['a@example.com', 'b@example.com'],
      ccs: ['c@example.com'],
      resourceIdRef: 'ein-7',
      caller,
    });
    const { body, caller: sentAs } = calls[0]!;
    assert.deepEqual(sentAs, authenticatedAs(caller));
    assert.equal(body['template_id'], 'ein-verified');
    assert.equal(body['subject'], "Your company's EIN has been verified");
    assert.deepEqual(body['to'], ['a@example.com', 'b@example.com']);
    assert.deepEqual(body['cc'], ['c@example.com']);
    assert.equal(body['resource_type_ref'], 'ein');
    assert.equal(body['resource_id_ref'], 'ein-7');
    assert.deepEqual(body['template_data'], {
      RECIPIENT_NAME: 'there',
      DASHBOARD_URL: 'https://app.example.com/dashboard',
      REFERENCE_ID: 'ein-7',
    });
  });

  it('turns a provider rejection into a non-retryable failure and a provider outage into a retryable one', async () => {
    for (const [kind, nonRetryable] of [
      ['provider_rejected', true],
      ['transient', false],
    ] as const) {
      const { email } = fakeEmail(new MailroomError(kind, `provider said ${kind}`));
      const acts = createEmailActivities({ email, config });
      await assert.rejects(
        new MockActivityEnvironment(undefined, { logger: quietSdkLogger() }).run(acts.deliverWelcomeEmail, {
          idempotencyKey: 'k',
          userId: 'u',
          email: 'a@example.com',
          name: null,
          caller: {},
        }),
        (err: unknown) =>
          err instanceof ApplicationFailure &&
          err.nonRetryable === nonRetryable &&
          err.message === `provider said ${kind}`,
      );
    }
  });

  it('markEmailFailed finalises the record keyed by the idempotency key', async () => {
    const { email, failed } = fakeEmail();
    const acts = createEmailActivities({ email, config });
    await new MockActivityEnvironment(undefined, { logger: quietSdkLogger() }).run(
      acts.markEmailFailed,
      'wf-3:ein-email',
      'gave up',
    );
    assert.deepEqual(failed, [['wf-3:ein-email', 'gave up']]);
  });
});
