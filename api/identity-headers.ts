import type { Context } from 'koa';
import type { Caller } from '../core/email/contract.ts';

/** Where each part of the caller's identity arrives (seed: Authentication). */
export const IDENTITY_HEADERS = {
  companyId: 'x-company-id',
  organizationId: 'x-organization-id',
  userId: 'x-user-id',
} as const satisfies Record<keyof Caller, string>;

/**
 * The identity headers that were sent, trimmed; empty ones are left out.
 * Whether they are required and well-formed is decided where they are used:
 * the email core checks UUIDs, the workflow routes bound what goes into a
 * run's memo (api/routes/workflow/caller.ts).
 */
export function identityFromHeaders(ctx: Context): Caller {
  const caller: Caller = {};
  for (const [field, header] of Object.entries(IDENTITY_HEADERS) as Array<[keyof Caller, string]>) {
    const value = ctx.get(header).trim();
    if (value) caller[field] = value;
  }
  return caller;
}
