import { Type } from '@sinclair/typebox';
import { WorkflowNotFoundError } from '@temporalio/client';
import {
  CancelScheduledResponseSchema,
  SCHEDULED_PAGE_DEFAULT,
  SCHEDULED_PAGE_MAX,
  ScheduledListResponseSchema,
} from '../../../core/email/send/index.ts';
import type { ScheduledPosition } from '../../../core/email/send/index.ts';
import type { Principal } from '../../../core/identity.ts';
import { CURSOR_INVALID } from '../../../core/workflows/workflow-messages.ts';
import { scheduledRunId } from '../../../core/workflows/scheduled-send.ts';
import { HttpError } from '../../http-error.ts';
import type { RouteAuth } from '../../middleware/authenticate.ts';
import { defineRoute, failure, type RouteSpec } from '../../route.ts';
import { decodeCursor, encodeCursor } from '../workflow/runs-cursor.ts';
import { START_DEADLINE_MS } from './scheduled-runs.ts';
import { withinDeadline } from '../../temporal-deadlines.ts';

/**
 * A company's scheduled emails (`send_at` on send and bulk): listed and
 * cancelled with the scope that scheduled them, `email:send`. The company is
 * the caller's own; a key bound to an organization reaches that
 * organization's only, a test key test sends only. Anything else is 404.
 */
const AUTH: RouteAuth = { scope: 'email:send', identityFromKey: true, company: true };
const AUTH_FAILURES = {
  401: failure('No valid API key or identity headers.'),
  403: failure('The API key lacks the email:send scope.'),
};

/** The listing a cursor continues: this caller's, in this mode (a cursor of another is refused). */
const cursorScope = (principal: Principal, companyId: string) =>
  JSON.stringify(['scheduled', companyId, principal.boundOrganizationId ?? null, principal.test === true]);

function positionOf(bytes: Buffer): ScheduledPosition {
  const parsed: unknown = JSON.parse(bytes.toString('utf8'));
  if (!Array.isArray(parsed) || typeof parsed[0] !== 'number' || typeof parsed[1] !== 'string')
    throw new HttpError(400, CURSOR_INVALID);
  return { sendAt: new Date(parsed[0]), emailId: parsed[1] };
}

export const listScheduledRoute = defineRoute({
  method: 'get',
  path: '/api/email/scheduled',
  operationId: 'listScheduledEmails',
  summary: "The company's scheduled emails not sent yet, soonest first",
  description:
    'Pending scheduled emails by `send_at`, then email id. Page with `cursor` (the previous answer’s ' +
    '`nextCursor`, null on the last page). An email sent or cancelled meanwhile is left out, so a page may hold ' +
    'fewer than `limit`.',
  tag: 'email',
  auth: AUTH,
  query: Type.Object(
    {
      cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 512 })),
      limit: Type.Optional(
        Type.Integer({ minimum: 1, maximum: SCHEDULED_PAGE_MAX, default: SCHEDULED_PAGE_DEFAULT }),
      ),
    },
    { additionalProperties: false },
  ),
  responses: {
    200: { description: 'One page.', schema: ScheduledListResponseSchema },
    400: failure('A limit or cursor that is not valid.'),
    ...AUTH_FAILURES,
  },
  async handler(ctx, { email, config }) {
    const { principal, company } = ctx.state;
    const scope = cursorScope(principal, company.companyId);
    const { cursor, limit } = ctx.valid.query;
    let after: ScheduledPosition | undefined;
    try {
      after = cursor === undefined ? undefined : positionOf(decodeCursor(config.secret, scope, cursor));
    } catch {
      throw new HttpError(400, CURSOR_INVALID);
    }
    const page = await email.scheduled.list(principal, after, limit ?? SCHEDULED_PAGE_DEFAULT);
    const next = page.next && [page.next.sendAt.getTime(), page.next.emailId];
    ctx.body = {
      success: true,
      data: page.data,
      nextCursor: next ? encodeCursor(config.secret, scope, Buffer.from(JSON.stringify(next))) : null,
    };
  },
});

export const cancelScheduledRoute = defineRoute({
  method: 'delete',
  path: '/api/email/scheduled/:email_id',
  operationId: 'cancelScheduledEmail',
  summary: 'Cancel a scheduled email before it is sent',
  description:
    'The record ends `failed` with error `cancelled` and the email is never sent; cancelling it again answers ' +
    'the same. Already sent, or being sent at this moment → 409. Its workflow run is cancelled too.',
  tag: 'email',
  auth: AUTH,
  // Not `format: uuid`: a malformed id is not found (404) like any unknown one.
  params: Type.Object({
    email_id: Type.String({ maxLength: 100, description: 'The scheduled email’s id.' }),
  }),
  responses: {
    200: { description: 'Cancelled.', schema: CancelScheduledResponseSchema },
    400: failure('An email_id over 100 characters.'),
    ...AUTH_FAILURES,
    404: failure('Unknown, not scheduled, or another company’s.'),
    409: failure('Already sent, being sent, or failed.'),
  },
  async handler(ctx, { email, temporal, logger }) {
    const emailId = ctx.valid.params.email_id.toLowerCase();
    await email.scheduled.cancel(emailId, ctx.state.principal);
    // The record decides (the run finds it cancelled when it wakes); ending the
    // run now only spares it the wait. Temporal unreachable: it ends then.
    try {
      await withinDeadline(
        () => temporal.workflow.getHandle(scheduledRunId(emailId)).cancel(),
        START_DEADLINE_MS,
      );
    } catch (err) {
      if (!(err instanceof WorkflowNotFoundError))
        logger.warn(
          { email_id: emailId, err: String(err) },
          'scheduled email cancelled; its run ends at send_at',
        );
    }
    ctx.body = { success: true, email_id: emailId, status: 'failed', error: 'cancelled' };
  },
});

export const scheduledRoutes: readonly RouteSpec[] = [listScheduledRoute, cancelScheduledRoute];
