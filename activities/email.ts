import { Context, log } from '@temporalio/activity';
import type { Config } from '../core/config.ts';
import { BIDI_CONTROLS } from '../core/email/addresses.ts';
import type { EmailService } from '../core/email/contract.ts';
import type { CallOffOutcome } from '../core/email/send/index.ts';
import { authenticatedAs, type Caller } from '../core/identity.ts';
import { einActionTemplate, type EinAction } from '../core/workflows/ein-actions.ts';
import type { ScheduledSendResult } from '../core/workflows/scheduled-send.ts';
import { subjectOf } from '../templates/engine.ts';
import { templates, type TemplateData, type TemplateDefinition } from '../templates/index.ts';
import { withFailureMapping } from './failures.ts';

export interface WelcomeEmailRequest {
  /** `${workflowId}:<step>`: the same on every attempt and every replay, so the email is sent once. */
  idempotencyKey: string;
  userId: string;
  email: string;
  name: string | null;
  /** Who triggered the run (memo `caller`); `welcome` needs no identity, so it may be empty. */
  caller: Caller;
}

export interface EinEmailRequest {
  idempotencyKey: string;
  emailAction: EinAction;
  recipients: string[];
  ccs?: string[] | undefined;
  recipientName?: string | undefined;
  resourceIdRef?: string | undefined;
  caller: Required<Omit<Caller, 'test'>> & Pick<Caller, 'test'>;
}

export interface SentEmail {
  emailId: string;
  providerId: string;
}

/**
 * How often a send in progress tells Temporal it is alive. The email
 * activities' heartbeatTimeout (workflows/retry-policy.ts) is a few multiples
 * of this, so a worker that dies mid-send is noticed in seconds, not after the
 * whole startToCloseTimeout.
 */
export const HEARTBEAT_INTERVAL_MS = 2_000;

/**
 * The stored user name as the welcome email's headers may carry it (the
 * display name, and the subject through the template's default subject):
 * runs of whitespace and control characters become one space, and it is
 * clipped to a display name's 200 characters, so an odd name in the `users`
 * collection cannot make the send invalid and fail the run. A name of
 * nothing else is no name.
 */
function oneLineName(name: string | null): string | null {
  const clean = (name ?? '')
    // eslint-disable-next-line no-control-regex -- folding control characters is the point
    .replace(/[\s\u0000-\u0008\u000e-\u001f\u007f-\u009f]+/g, ' ')
    // Bidirectional overrides (a name's check refuses them): dropped from a stored name.
    .replace(BIDI_CONTROLS, '')
    .trim();
  return clean ? clean.slice(0, 200).trim() : null;
}

/**
 * The `welcome` template's default subject for this user, the name clipped
 * so it cannot push the subject past the 200-character limit.
 */
function welcomeSubject(name: string | null, data: TemplateData<typeof templates.welcome>): string {
  const clipped = name?.slice(0, 150).trim();
  return clipped ? subjectOf(templates.welcome, { ...data, USER_NAME: clipped }) : 'Welcome to Mailroom';
}

/** A send body for a template code sends, its data typed by the template's own variables. */
function templateSend<T extends TemplateDefinition>(
  template: T,
  data: TemplateData<T>,
  fields: { to: unknown; subject: string } & Record<string, unknown>,
): Record<string, unknown> {
  return { ...fields, template_id: template.id, template_data: data };
}

export function createEmailActivities({ email, config }: { email: EmailService; config: Config }) {
  /** One send through the shared email core, heartbeating while the provider call is in flight. */
  async function send(
    body: Record<string, unknown>,
    caller: Caller,
    idempotencyKey: string,
  ): Promise<SentEmail> {
    const ctx = Context.current();
    const beat = setInterval(() => ctx.heartbeat(), HEARTBEAT_INTERVAL_MS);
    try {
      return await withFailureMapping(async () => {
        // A run acts for the authenticated caller that started it (its memo).
        const res = await email.send(body, authenticatedAs(caller), { idempotencyKey });
        log.info('email sent', { idempotencyKey, emailId: res.email_id, attempt: ctx.info.attempt });
        return { emailId: res.email_id, providerId: res.provider_id };
      });
    } finally {
      clearInterval(beat);
    }
  }

  return {
    async deliverWelcomeEmail(req: WelcomeEmailRequest): Promise<SentEmail> {
      const name = oneLineName(req.name);
      const data: TemplateData<typeof templates.welcome> = {
        USER_NAME: name ?? req.email,
        LOGIN_URL: config.loginUrl,
        SUPPORT_EMAIL: config.supportEmail,
      };
      const body = templateSend(templates.welcome, data, {
        to: name ? { email: req.email, name } : req.email,
        subject: welcomeSubject(name, data),
        resource_type_ref: 'user',
        resource_id_ref: req.userId,
      });
      return send(body, req.caller, req.idempotencyKey);
    },

    async deliverEinEmail(req: EinEmailRequest): Promise<SentEmail> {
      const template = einActionTemplate(req.emailAction);
      // recipientName names the person addressed: the first recipient (its
      // To name, so the record's recipient_name too); the others as given.
      const name = oneLineName(req.recipientName ?? null);
      const to = req.recipients.map((email, i) => (i === 0 && name ? { email, name } : email));
      const data: TemplateData<typeof template> = {
        RECIPIENT_NAME: req.recipientName ?? 'there',
        DASHBOARD_URL: config.dashboardUrl,
        ...(req.resourceIdRef ? { REFERENCE_ID: req.resourceIdRef } : {}),
      };
      const body = templateSend(template, data, {
        to,
        subject: subjectOf(template, data),
        resource_type_ref: 'ein',
        ...(req.ccs?.length ? { cc: req.ccs } : {}),
        ...(req.resourceIdRef ? { resource_id_ref: req.resourceIdRef } : {}),
      });
      return send(body, req.caller, req.idempotencyKey);
    },

    /**
     * A scheduled email's time has come (workflows/scheduled-send.ts): its
     * stored request sent once through the core, or what became of it.
     */
    async deliverScheduledEmail(emailId: string): Promise<ScheduledSendResult> {
      const ctx = Context.current();
      const beat = setInterval(() => ctx.heartbeat(), HEARTBEAT_INTERVAL_MS);
      try {
        return await withFailureMapping(() => email.scheduled.sendDue(emailId));
      } finally {
        clearInterval(beat);
      }
    },

    /** Its run was cancelled: the email too, unless it is already sent or being sent. */
    async cancelScheduledEmail(emailId: string): Promise<string> {
      return withFailureMapping(() => email.scheduled.cancelDue(emailId));
    },

    /** Its run is over: the stored request is dropped. */
    async forgetScheduledEmail(emailId: string): Promise<void> {
      return withFailureMapping(() => email.scheduled.forget(emailId));
    },

    /** Its run was cancelled: the step's email, unless it is being sent or was (send/step-call-off.ts). */
    async callOffEmail(idempotencyKey: string): Promise<CallOffOutcome> {
      return withFailureMapping(() => email.callOff(idempotencyKey));
    },

    /** The workflow gave up on a send: its record must not stay `pending` forever. */
    async markEmailFailed(idempotencyKey: string, reason: string): Promise<void> {
      return withFailureMapping(() => email.markFailed(idempotencyKey, reason));
    },
  };
}
