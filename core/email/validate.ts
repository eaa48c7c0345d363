import { MailroomError } from '../errors.ts';
import { getTemplate } from '../../templates/index.ts';
import { hasBodyControlCharacters, hasControlCharacters, isPlainObject, parse } from '../validation.ts';
import {
  dedupeRecipients,
  hasAtSign,
  isBlockedDomain,
  isValidMailbox,
  parseMailbox,
  toAddressList,
  type Address,
} from './addresses.ts';
import * as msg from './email-messages.ts';
import {
  MAX_ATTACHMENT_BYTES,
  MAX_ATTACHMENTS,
  MAX_RECIPIENTS,
  MAX_TOTAL_ATTACHMENT_BYTES,
  SendBodySchema,
  SUBJECT_MAX_LENGTH,
  type SendBody,
} from './email-schema.ts';
import { canonicalVariables, missingVariables } from './template-variables.ts';

/** What a template variable or html_body holding a NUL, DEL or the like is told. */
const NO_CONTROLS = 'must not contain control characters';

/**
 * A media type as a Content-Type header carries it (RFC 6838 names, RFC 2045
 * parameters): `application/pdf`, `text/plain; charset=utf-8`. Each part is
 * delimited by a character the part before cannot hold, so matching is
 * linear. Anything else would reach the message as a malformed header.
 */
const MEDIA_TYPE =
  /^[A-Za-z0-9][\w!#$&^.+-]{0,126}\/[A-Za-z0-9][\w!#$&^.+-]{0,126}(?: *; *[\w!#$&^.+-]+=(?:[\w!#$&^.+-]+|"[^"\\]*"))*$/;
export const isMediaType = (value: string): boolean => MEDIA_TYPE.test(value);

/**
 * Turns an untrusted send body into a NormalizedSend, or throws
 * MailroomError('validation') with the interface's message. Checks run in a fixed
 * precedence so a body with several problems always gets the same answer:
 * shape of the body → recipient → subject → template_id → field types and
 * unknown fields → subject length/line breaks/control characters → tags'
 * control characters → template exists → addresses (from's and reply_to's
 * with their names' @) → blocked domains → recipient count → attachments →
 * template variables → link variables (every caller: templates/links.ts).
 */

export interface AttachmentInput {
  filename?: string | undefined;
  /** base64 with whitespace removed. */
  content?: string | undefined;
  contentType?: string | undefined;
  path?: string | undefined;
}

export interface NormalizedSend {
  to: Address[];
  cc: Address[];
  bcc: Address[];
  from: Address | undefined;
  replyTo: Address | undefined;
  subject: string;
  templateId: string;
  templateData: Record<string, string>;
  htmlBody: string | undefined;
  attachments: AttachmentInput[];
  tags: string[];
  resourceTypeRef: string | undefined;
  resourceIdRef: string | undefined;
  locale: string;
  language: string;
  /** Links in the HTML go through the click redirect (default true). */
  trackClicks: boolean;
  /** The HTML carries the open pixel (default true). */
  trackOpens: boolean;
}

const fail = (message: string) => new MailroomError('validation', message);

const isBlank = (value: unknown) =>
  value === undefined || value === null || (typeof value === 'string' && value.trim() === '');

function hasNoRecipient(to: unknown): boolean {
  if (isBlank(to)) return true;
  if (Array.isArray(to)) return to.length === 0 || to.every((t) => isBlank(t));
  return false;
}

/** Decoded byte length of a well-formed base64 string. */
export function base64DecodedLength(b64: string): number {
  const padding = b64.endsWith('==') ? 2 : b64.endsWith('=') ? 1 : 0;
  return (b64.length / 4) * 3 - padding;
}

/**
 * Strict base64 (standard alphabet, padded); MIME line breaks are tolerated
 * and removed. Checked by Node's own codec: the decoder skips what is not
 * base64, so re-encoding gives the input back only when every character was
 * (and the padding canonical). A regular expression held the event loop
 * several times longer per MB of attachment (docs/benchmarks.md).
 */
export function normalizeBase64(content: string): string | undefined {
  const spaced = [' ', '\r', '\n', '\t'].some((blank) => content.includes(blank));
  const compact = spaced ? content.replace(/[\r\n\t ]/g, '') : content;
  if (compact.length === 0 || compact.length % 4 !== 0) return undefined;
  return Buffer.from(compact, 'base64').toString('base64') === compact ? compact : undefined;
}

/** Bidirectional marks, embeddings, overrides and isolates; zero-width and invisible characters; BOM. */
const FILENAME_FORMATTING = /[\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]/;

function checkAttachments(attachments: SendBody['attachments']): AttachmentInput[] {
  const list = attachments ?? [];
  if (list.length > MAX_ATTACHMENTS) throw fail(msg.TOO_MANY_ATTACHMENTS);
  let total = 0;
  return list.map((a, i) => {
    // They become MIME headers at the provider: CR/LF would inject headers.
    if (hasControlCharacters(a.filename ?? '') || hasControlCharacters(a.contentType ?? ''))
      throw fail(msg.attachmentControlCharacters(i));
    // A mail client shows the name beside an icon chosen by its extension: `invoice\u202efdp.exe`
    // reads "invoiceexe.pdf". Bidirectional controls and invisible characters have no place in it.
    if (a.filename !== undefined && FILENAME_FORMATTING.test(a.filename))
      throw fail(msg.attachmentInvisibleCharacters(i));
    if (a.contentType !== undefined && !isMediaType(a.contentType))
      throw fail(
        msg.invalidField(`attachments[${i}].contentType`, 'must be a media type such as application/pdf'),
      );
    const hasContent = a.content !== undefined;
    const hasPath = a.path !== undefined;
    if (hasContent && hasPath) throw fail(msg.ATTACHMENT_CONTENT_AND_PATH);
    if (!hasContent && !hasPath)
      throw fail(msg.missingRequiredFields([`attachments[${i}].content or attachments[${i}].path`]));
    if (hasPath) return { filename: a.filename, contentType: a.contentType, path: a.path };
    if (a.filename === undefined) throw fail(msg.missingRequiredFields([`attachments[${i}].filename`]));
    const content = normalizeBase64(a.content ?? '');
    if (content === undefined) throw fail(msg.INVALID_BASE64);
    const size = base64DecodedLength(content);
    total += size;
    if (size > MAX_ATTACHMENT_BYTES || total > MAX_TOTAL_ATTACHMENT_BYTES)
      throw fail(msg.ATTACHMENT_TOO_LARGE);
    return { filename: a.filename, contentType: a.contentType, content };
  });
}

/** Checks the caller-independent parts of a send body. */
export function validateSendBody(raw: unknown, blockedDomains: readonly string[]): NormalizedSend {
  if (!isPlainObject(raw)) throw fail(msg.BODY_NOT_OBJECT);
  if (hasNoRecipient(raw['to'])) throw fail(msg.RECIPIENT_REQUIRED);
  if (isBlank(raw['subject'])) throw fail(msg.SUBJECT_REQUIRED);
  if (isBlank(raw['template_id'])) throw fail(msg.missingRequiredFields(['template_id']));
  const body: SendBody = parse(SendBodySchema, raw, msg.describeBodyProblem);

  // Characters as a reader counts them (code points), not UTF-16 units: 200 emoji fit.
  if (longerThan(body.subject, SUBJECT_MAX_LENGTH)) throw fail(msg.SUBJECT_TOO_LONG);
  if (/[\r\n]/.test(body.subject)) throw fail(msg.SUBJECT_LINE_BREAK);
  // Header-bound: the subject and the tags (SendGrid categories) reach the
  // message's headers; names, addresses and attachment fields are checked below.
  if (hasControlCharacters(body.subject)) throw fail(msg.SUBJECT_CONTROL_CHARACTERS);
  if (body.tags?.some(hasControlCharacters)) throw fail(msg.TAG_CONTROL_CHARACTERS);
  if (!getTemplate(body.template_id)) throw fail(msg.TEMPLATE_NOT_FOUND);

  const lists = { to: toAddressList(body.to), cc: toAddressList(body.cc), bcc: toAddressList(body.bcc) };
  const from = body.from === undefined ? undefined : parseMailbox(body.from);
  const replyTo = body.reply_to === undefined ? undefined : parseMailbox(body.reply_to);
  const everyRecipient = [...lists.to, ...lists.cc, ...lists.bcc];
  if (body.from !== undefined && (!from || !isValidMailbox(from))) throw fail(msg.INVALID_EMAIL_ADDRESS);
  refuseAddressLikeName('from', from);
  if (body.reply_to !== undefined && (!replyTo || !isValidMailbox(replyTo)))
    throw fail(msg.INVALID_EMAIL_ADDRESS);
  refuseAddressLikeName('reply_to', replyTo);
  if (!everyRecipient.every(isValidMailbox)) throw fail(msg.INVALID_EMAIL_ADDRESS);
  if (everyRecipient.some((a) => isBlockedDomain(a.email, blockedDomains)))
    throw fail(msg.DOMAIN_NOT_ALLOWED);
  if (everyRecipient.length > MAX_RECIPIENTS) throw fail(msg.TOO_MANY_RECIPIENTS);

  const attachments = checkAttachments(body.attachments);

  const missing = missingVariables(body.template_id, body.template_data ?? {});
  if (missing.length > 0) throw fail(msg.missingRequiredFields(missing));
  if (body.template_id === 'custom' && isBlank(body.html_body))
    throw fail(msg.missingRequiredFields(['html_body']));
  const checked = canonicalVariables(body.template_id, body.template_data ?? {});
  if ('problem' in checked)
    throw fail(msg.invalidField(`template_data.${checked.variable}`, checked.problem));
  const templateData = checked.data;
  const garbled = Object.keys(templateData).find((name) => hasBodyControlCharacters(templateData[name]!));
  if (garbled !== undefined) throw fail(msg.invalidField(`template_data.${garbled}`, NO_CONTROLS));
  if (body.html_body !== undefined && hasBodyControlCharacters(body.html_body))
    throw fail(msg.invalidField('html_body', NO_CONTROLS));
  // Labels kept on the record and answered back: one line each, as a workflow input's are.
  for (const field of ['resource_id_ref', 'resource_type_ref', 'locale'] as const)
    if (hasControlCharacters(body[field] ?? '')) throw fail(msg.invalidField(field, NO_CONTROLS));

  return {
    ...dedupeRecipients(lists),
    from,
    replyTo,
    subject: body.subject.trim(),
    templateId: body.template_id,
    templateData,
    htmlBody: body.html_body,
    attachments,
    tags: body.tags ?? [],
    resourceTypeRef: body.resource_type_ref,
    resourceIdRef: body.resource_id_ref,
    locale: body.locale ?? 'en-us',
    language: body.language ?? 'en',
    trackClicks: body.track_clicks ?? true,
    trackOpens: body.track_opens ?? true,
  };
}

/**
 * Mail clients show the sender's name alone: "security@bank.example" there
 * reads as another address, and so does "security＠bank.example"
 * (full-width), so neither the sender's nor its Reply-To's name holds an at
 * sign or a look-alike of one (addresses.ts hasAtSign). A recipient's name
 * is the recipient's own (products address users by whatever name they
 * hold, an address included): it is not the sender's claim.
 */
function refuseAddressLikeName(field: string, address: Address | undefined): void {
  if (address?.name !== undefined && hasAtSign(address.name))
    throw fail(msg.invalidField(field, 'its name must not contain @'));
}

/** Whether `text` has more than `max` code points; stops counting there. */
function longerThan(text: string, max: number): boolean {
  if (text.length <= max) return false;
  let count = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    // A high surrogate followed by a low one is one character.
    if (code >= 0xd800 && code <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) i++;
    }
    if (++count > max) return true;
  }
  return false;
}
