import { Type, type Static } from '@sinclair/typebox';
import type { WorkflowDefinition } from './definition.ts';
import { EIN_ACTIONS, EIN_ACTION_VALUES, type EinAction } from './ein-actions.ts';
import { EMAIL_ACTION } from './search-attributes.ts';
import { conflictingFields } from './workflow-messages.ts';
import { MailroomError } from '../errors.ts';
import { MAX_RECIPIENTS } from '../email/email-schema.ts';
import { MAX_ADDRESS_LENGTH } from '../email/addresses.ts';

/** `0b5c6f3e-8d2a-4c1b-9e7f-1a2b3c4d5e6f`: ajv's uuid format would also take a `urn:uuid:` prefix. */
const UUID_LENGTH = 36;

/**
 * POST /api/workflow/send-email-received-ein body, after normalizeEinInput.
 * The three identity ids must be UUIDs: the email service authorises EIN
 * templates with them, so a non-UUID is refused here (400) instead of
 * failing the run later. They name the caller: different from the
 * caller's → 403; they are lower-cased. Recipients and ccs follow a send's rules (at most 50 together,
 * addresses as a send checks them: input-rules.ts).
 */
export const SendEmailReceivedEinInput = Type.Object(
  {
    userId: Type.String({ format: 'uuid', maxLength: UUID_LENGTH }),
    companyId: Type.String({ format: 'uuid', maxLength: UUID_LENGTH }),
    organizationId: Type.String({ format: 'uuid', maxLength: UUID_LENGTH }),
    // A plain string enum (not a union of literals) so ajv reports one `enum`
    // error that the gateway turns into "must be one of: …".
    emailAction: Type.Unsafe<EinAction>(
      Type.String({
        enum: EIN_ACTION_VALUES,
        description: 'which notification to send (its template and subject)',
      }),
    ),
    recipientName: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    recipients: Type.Array(Type.String({ format: 'email', maxLength: MAX_ADDRESS_LENGTH }), {
      minItems: 1,
      maxItems: MAX_RECIPIENTS,
    }),
    resource_id_ref: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    ccs: Type.Optional(
      Type.Array(Type.String({ format: 'email', maxLength: MAX_ADDRESS_LENGTH }), {
        maxItems: MAX_RECIPIENTS,
      }),
    ),
  },
  {
    examples: [
      {
        userId: '0b5c6f3e-8d2a-4c1b-9e7f-1a2b3c4d5e6f',
        companyId: '6a0e1d2c-3b4a-4f5e-8d7c-9b0a1f2e3d4c',
        organizationId: 'c1f2e3d4-a5b6-4c7d-8e9f-0a1b2c3d4e5f',
        emailAction: 'ein-received',
        recipientName: 'Grace',
        recipients: ['owner@example.com'],
        ccs: ['cfo@example.com'],
        resource_id_ref: 'ein-42',
      },
    ],
  },
);

export type SendEmailReceivedEinInput = Static<typeof SendEmailReceivedEinInput>;

export const SendEmailReceivedEinResult = Type.Object({
  message: Type.Literal('ein email sent'),
  emailAction: Type.String(),
  emailId: Type.String({ format: 'uuid' }),
});

export type SendEmailReceivedEinResult = Static<typeof SendEmailReceivedEinResult>;

/** Each canonical key and the other spelling a client may use (the interface's table). */
export const EIN_KEY_ALIASES: ReadonlyArray<readonly [canonical: string, alias: string]> = [
  ['userId', 'user_id'],
  ['companyId', 'company_id'],
  ['organizationId', 'organization_id'],
  ['emailAction', 'email_action'],
  ['recipientName', 'recipient_name'],
];

/**
 * Accepts snake_case and camelCase keys and returns the body with canonical
 * keys only. Both spellings with different values is a client mistake we
 * refuse rather than guess about.
 */
export function normalizeEinInput(body: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...body };
  for (const [canonical, alias] of EIN_KEY_ALIASES) {
    if (!(alias in out)) continue;
    const aliasValue = out[alias];
    delete out[alias];
    if (canonical in out && JSON.stringify(out[canonical]) !== JSON.stringify(aliasValue)) {
      throw new MailroomError('validation', conflictingFields(alias, canonical));
    }
    out[canonical] = aliasValue;
  }
  return out;
}

export const sendEmailReceivedEin: WorkflowDefinition = {
  name: 'send-email-received-ein',
  workflowType: 'sendEmailReceivedEin',
  input: SendEmailReceivedEinInput,
  normalize: normalizeEinInput,
  aliases: EIN_KEY_ALIASES,
  result: SendEmailReceivedEinResult,
  identityFields: { companyId: 'companyId', organizationId: 'organizationId', userId: 'userId' },
  idFields: ['userId', 'companyId', 'organizationId'],
  addressFields: ['recipients', 'ccs'],
  // Operators look for the runs of one notification: `EmailAction = "ein-rejected"`.
  searchAttributes: { emailAction: EMAIL_ACTION },
  templates: Object.values(EIN_ACTIONS).map((template) => template.id),
  description:
    'Sends the notification `emailAction` selects to `recipients` (cc `ccs`) on behalf of the company.',
};
