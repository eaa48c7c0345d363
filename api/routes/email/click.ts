import { Type } from '@sinclair/typebox';
import { CLICK_TOKEN_MAX_LENGTH } from '../../../core/email/tracking/index.ts';
import { defineRoute, failure } from '../../route.ts';
import { CLICK_LINK_EXPIRED, INVALID_CLICK_LINK } from '../../../core/email/email-messages.ts';

/**
 * GET /api/email/click/{token}: a tracked link (docs/click-tracking.md). No
 * authentication, like the pixel: the token's signature is the credential.
 * A token Mailroom signed → 302 to the URL it carries, the click (and its
 * open) buffered for the next batch write. Anything else (tampered,
 * truncated, signed with another secret, too long) or expired (older than
 * CLICK_LINK_LIFETIME_DAYS) → 400 and no Location: the endpoint never
 * redirects anywhere Mailroom did not put in an email, nor for ever.
 */
export const clickRoute = defineRoute({
  method: 'get',
  path: '/api/email/click/:token',
  operationId: 'followTrackedLink',
  summary: 'Tracked link: records the click and redirects',
  description:
    'The link Mailroom put in place of an http(s) link of an email it sent. Records the click (which counts as an open) and redirects to the original URL. A token that fails verification, or is older than the configured lifetime (CLICK_LINK_LIFETIME_DAYS, default 365 days), is answered 400 without a redirect.',
  tag: 'email',
  params: Type.Object({
    token: Type.String({
      minLength: 1,
      maxLength: CLICK_TOKEN_MAX_LENGTH,
      pattern: '^[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+$',
      description: 'base64url(payload) "." base64url(mac), as Mailroom wrote it into the email.',
    }),
  }),
  // A token that is not even well-formed fails like any other that fails verification.
  describeProblem: () => INVALID_CLICK_LINK,
  responses: {
    302: {
      description: 'Redirect to the original URL (`Location`).',
      headers: {
        Location: 'The original URL the email linked to (percent-encoded).',
        'Cache-Control': '`no-store`: every click reaches Mailroom and is recorded.',
      },
    },
    400: failure(
      'The token fails verification (tampered, truncated, foreign or malformed), or its lifetime is over.',
      [INVALID_CLICK_LINK, CLICK_LINK_EXPIRED],
    ),
  },
  async handler(ctx, { email }) {
    ctx.set('Cache-Control', 'no-store');
    // A HEAD (Koa's router serves it with this GET route) is a checker's, not a reader's: not counted.
    const url = await email.followClick(ctx.valid.params.token, { count: ctx.method === 'GET' });
    // 302 with Location (Koa's redirect: encodeurl, and a short body naming the URL).
    ctx.redirect(url);
  },
});
