import { linkVariables, type TemplateDefinition } from '../../templates/define.ts';
import { MailroomError } from '../errors.ts';
import {
  notWithoutAuthentication,
  ONE_RECIPIENT_WITHOUT_AUTHENTICATION,
  linkOriginNotAllowed,
} from './messages.ts';
import { httpOrigin } from '../validation.ts';
import type { NormalizedSend } from './validate.ts';

/**
 * What an unauthenticated caller may do with a signup template
 * (password-reset, welcome, verification): exactly what a signup or login
 * flow needs and nothing a phisher could use. One recipient, no cc/bcc, no
 * attachments, the configured sender, and every link on an allowed origin.
 * Authenticated callers are never narrowed.
 */
export function assertSignupShape(
  input: NormalizedSend,
  template: TemplateDefinition,
  allowedOrigins: readonly string[],
): void {
  const fail = (message: string) => new MailroomError('validation', message);
  if (input.to.length !== 1) throw fail(ONE_RECIPIENT_WITHOUT_AUTHENTICATION);
  if (input.cc.length) throw fail(notWithoutAuthentication('cc'));
  if (input.bcc.length) throw fail(notWithoutAuthentication('bcc'));
  if (input.attachments.length) throw fail(notWithoutAuthentication('attachments'));
  if (input.from) throw fail(notWithoutAuthentication('from'));
  if (input.replyTo) throw fail(notWithoutAuthentication('reply_to'));
  for (const name of linkVariables(template)) {
    const value = input.templateData[name];
    if (value !== undefined && !allowedOrigins.includes(httpOrigin(value) ?? '')) {
      throw fail(linkOriginNotAllowed(name));
    }
  }
}
