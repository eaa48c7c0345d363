import { variableKinds, type ConfiguredValue, type TemplateDefinition } from '../../../templates/define.ts';
import { renderSubject } from '../../../templates/engine.ts';
import { MailroomError } from '../../errors.ts';
import { isPlainObject } from '../../validation.ts';
import { CLICK_PATH } from '../tracking/click-tracking.ts';
import {
  linkOriginNotAllowed,
  linkToRedirect,
  notPlainText,
  notWithoutAuthentication,
  ONE_RECIPIENT_WITHOUT_AUTHENTICATION,
  SIGNUP_LINKS_NOT_CONFIGURED,
} from '../email-messages.ts';
import { isPlainText, PLAIN_NAME_MAX_LENGTH, PLAIN_TEXT_MAX_LENGTH } from '../tracking/plain-text.ts';
import type { NormalizedSend } from '../validate.ts';

/**
 * What an unauthenticated caller may do with a signup template
 * (password-reset, welcome, verification): exactly what a signup or login
 * flow needs and nothing a phisher could use. One recipient, no cc/bcc, no
 * attachments, the configured sender, the template's own subject, and of the
 * variables (templates/define.ts, VariableKind):
 * - `config` ones from the configuration, whatever the request says;
 * - `link` ones on an origin of SIGNUP_LINK_ORIGINS (none when it is unset),
 *   and never into Mailroom's own click redirect, which would forward the
 *   reader to any URL a key holder once mailed; where every origin is
 *   allowed (`any`), the links are not click-tracked either, so no anonymous
 *   caller gets a signed redirect to a URL of its choosing;
 * - `name` and `text` ones plain words (plain-text.ts), as the recipient's
 *   display name;
 * - undeclared ones dropped.
 * Authenticated callers are never narrowed.
 */

export interface SignupPolicy {
  /**
   * Origins the links may point at (SIGNUP_LINK_ORIGINS); empty: none, so no
   * signup send; `any`: every http(s) origin (trusted-headers mode with the
   * list unset: the proxy in front answers for who may call).
   */
  linkOrigins: readonly string[] | 'any';
  /** The values `config` variables stand for. */
  configured: Readonly<Record<ConfiguredValue, string>>;
}

const fail = (message: string) => new MailroomError('validation', message);

/**
 * The raw body with the template's `config` variables set from the
 * configuration, before validation: a signup flow need not send them, and
 * what it sends is not used.
 */
export function withConfiguredVariables(
  body: unknown,
  template: TemplateDefinition,
  configured: SignupPolicy['configured'],
): unknown {
  if (!isPlainObject(body)) return body;
  const data = body['template_data'] ?? {};
  if (!isPlainObject(data)) return body;
  const fromConfig = variableKinds(template).flatMap((v) =>
    v.config ? [[v.name, configured[v.config]]] : [],
  );
  if (fromConfig.length === 0) return body;
  return { ...body, template_data: { ...data, ...Object.fromEntries(fromConfig) } };
}

/** The validated send narrowed as above; throws 400 for what is not allowed. */
export function narrowSignupSend(
  input: NormalizedSend,
  template: TemplateDefinition,
  policy: SignupPolicy,
): NormalizedSend {
  if (input.to.length !== 1) throw fail(ONE_RECIPIENT_WITHOUT_AUTHENTICATION);
  if (input.cc.length) throw fail(notWithoutAuthentication('cc'));
  if (input.bcc.length) throw fail(notWithoutAuthentication('bcc'));
  if (input.attachments.length) throw fail(notWithoutAuthentication('attachments'));
  if (input.from) throw fail(notWithoutAuthentication('from'));
  if (input.replyTo) throw fail(notWithoutAuthentication('reply_to'));
  const name = input.to[0]!.name;
  if (name !== undefined && !isPlainText(name, PLAIN_NAME_MAX_LENGTH))
    throw fail(notPlainText('to.name', PLAIN_NAME_MAX_LENGTH));

  const data: Record<string, string> = {};
  for (const variable of variableKinds(template)) {
    const value = input.templateData[variable.name];
    if (value === undefined) continue;
    if (variable.kind === 'link') checkSignupLink(variable.name, value, policy.linkOrigins);
    else if (variable.kind !== 'config') {
      const max = variable.kind === 'name' ? PLAIN_NAME_MAX_LENGTH : PLAIN_TEXT_MAX_LENGTH;
      if (!isPlainText(value, max)) throw fail(notPlainText(variable.name, max));
    }
    data[variable.name] = value;
  }
  // The interface requires a subject; without authentication the template's own is sent.
  // With any origin allowed, a tracked link would become a redirect from the gateway's
  // domain to wherever an anonymous caller pointed it: such links go out as they are.
  const trackClicks = policy.linkOrigins !== 'any' && input.trackClicks;
  return { ...input, templateData: data, subject: renderSubject(template.id, data), trackClicks };
}

/** `value` is a link validate.ts already made canonical (templates/links.ts). */
function checkSignupLink(variable: string, value: string, origins: SignupPolicy['linkOrigins']): void {
  if (origins !== 'any' && origins.length === 0) throw fail(SIGNUP_LINKS_NOT_CONFIGURED);
  const url = new URL(value);
  if (origins !== 'any' && !origins.includes(url.origin)) throw fail(linkOriginNotAllowed(variable));
  if (intoClickRedirect(url)) throw fail(linkToRedirect(variable));
}

/**
 * Whether the link's path reaches a click redirect, on whatever host: the
 * gateway may be served under an allowed origin (behind a path-routing
 * proxy), so the path is judged alone, percent-decoded and with repeated
 * slashes merged as proxies do.
 */
function intoClickRedirect(url: URL): boolean {
  let path = url.pathname;
  try {
    path = decodeURIComponent(path);
  } catch {
    // Malformed escapes: judge the path as written.
  }
  return path
    .toLowerCase()
    .replace(/\/{2,}/g, '/')
    .includes(CLICK_PATH);
}
