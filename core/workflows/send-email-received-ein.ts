import { Type, type Static } from '@sinclair/typebox';
import { EIN_ACTION_VALUES, type EinAction } from './ein-actions.ts';

/**
 * POST /api/workflow/send-email-received-ein body, after normaliseEinInput.
 * The three identity ids must be UUIDs: the email service authorises EIN
 * templates with them (DESIGN.md, Auth), so a non-UUID is refused here (400)
 * instead of failing the run later.
 */
export const SendEmailReceivedEinInput = Type.Object({
  userId: Type.String({ format: 'uuid' }),
  companyId: Type.String({ format: 'uuid' }),
  organizationId: Type.String({ format: 'uuid' }),
  // A plain string enum (not a union of literals) so ajv reports one `enum`
  // error that the gateway turns into "must be one of: …".
  emailAction: Type.Unsafe<EinAction>(
    Type.String({
      enum: EIN_ACTION_VALUES,
      description: 'which notification to send; see core/workflows/ein-actions.ts',
    }),
  ),
  recipientName: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  recipients: Type.Array(Type.String({ format: 'email' }), { minItems: 1 }),
  resource_id_ref: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  ccs: Type.Optional(Type.Array(Type.String({ format: 'email' }))),
});

export type SendEmailReceivedEinInput = Static<typeof SendEmailReceivedEinInput>;

export interface SendEmailReceivedEinResult {
  message: 'ein email sent';
  emailAction: string;
  emailId: string;
}

/** Seed table: each canonical key and the other spelling a client may use. */
const EIN_KEY_ALIASES: ReadonlyArray<readonly [canonical: string, alias: string]> = [
  ['userId', 'user_id'],
  ['companyId', 'company_id'],
  ['organizationId', 'organization_id'],
  ['emailAction', 'email_action'],
  ['recipientName', 'recipient_name'],
];

/**
 * Accepts snake_case and camelCase keys (seed table) and returns the body with
 * canonical keys only. Both spellings with different values is a client
 * mistake we refuse rather than guess about.
 */
export function normaliseEinInput(body: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...body };
  for (const [canonical, alias] of EIN_KEY_ALIASES) {
    if (!(alias in out)) continue;
    const aliasValue = out[alias];
    delete out[alias];
    if (canonical in out && JSON.stringify(out[canonical]) !== JSON.stringify(aliasValue)) {
      throw new InputConflictError(`conflicting fields: ${alias} and ${canonical}`);
    }
    out[canonical] = aliasValue;
  }
  return out;
}

export class InputConflictError extends Error {
  override name = 'InputConflictError';
}
