import { Context, log } from '@temporalio/activity';
import type { Config } from '../core/config.ts';
import type { Caller, EmailService } from '../core/email/contract.ts';
import { renderSubject } from '../core/email/templates.ts';
import { einActionTemplate, type EinAction } from '../core/workflows/ein-actions.ts';
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
  caller: Required<Caller>;
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
 * The `welcome` template's default subject for this user. The stored name is
 * folded onto one line and clipped, so an odd name cannot push the subject
 * past the 200-character limit and make the send invalid.
 */
function welcomeSubject(name: string | null): string {
  const clean = (name ?? '').replace(/\s+/g, ' ').trim().slice(0, 150);
  return clean ? renderSubject('welcome', { USER_NAME: clean }) : 'Welcome to Mailroom';
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
        const res = await email.send(body, caller, { idempotencyKey });
        log.info('email sent', { idempotencyKey, emailId: res.email_id, attempt: ctx.info.attempt });
        return { emailId: res.email_id, providerId: res.provider_id };
      });
    } finally {
      clearInterval(beat);
    }
  }

  return {
    async deliverWelcomeEmail(req: WelcomeEmailRequest): Promise<SentEmail> {
      const body = {
        to: req.name ? { email: req.email, name: req.name } : req.email,
        subject: welcomeSubject(req.name),
        template_id: 'welcome',
        template_data: {
          USER_NAME: req.name ?? req.email,
          LOGIN_URL: config.loginUrl,
          SUPPORT_EMAIL: config.supportEmail,
        },
        resource_type_ref: 'user',
        resource_id_ref: req.userId,
      };
      return send(body, req.caller, req.idempotencyKey);
    },

    async deliverEinEmail(req: EinEmailRequest): Promise<SentEmail> {
      const templateId = einActionTemplate(req.emailAction);
      const templateData: Record<string, string> = {
        RECIPIENT_NAME: req.recipientName ?? 'there',
        DASHBOARD_URL: `${config.publicBaseUrl}/dashboard`,
      };
      if (req.resourceIdRef) templateData['REFERENCE_ID'] = req.resourceIdRef;
      const subject = renderSubject(templateId, templateData);
      const body: Record<string, unknown> = {
        to: req.recipients,
        subject,
        template_id: templateId,
        template_data: templateData,
        resource_type_ref: 'ein',
      };
      if (req.ccs?.length) body['cc'] = req.ccs;
      if (req.resourceIdRef) body['resource_id_ref'] = req.resourceIdRef;
      return send(body, req.caller, req.idempotencyKey);
    },

    /** The workflow gave up on a send: its record must not stay `pending` forever. */
    async markEmailFailed(idempotencyKey: string, reason: string): Promise<void> {
      return withFailureMapping(() => email.markFailed(idempotencyKey, reason));
    },
  };
}
