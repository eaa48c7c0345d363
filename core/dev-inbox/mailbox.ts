import { mkdirSync, readdirSync, readFileSync, statSync, watch } from 'node:fs';
import { join } from 'node:path';
import { Type, type Static } from '@sinclair/typebox';
import type { Address } from '../email/addresses.ts';
import { schemaErrors } from '../validation.ts';

/**
 * The dev mail sink's folder (`.data/mail/` under `npm run dev`): how captured
 * messages are written (infra/mail-sink.ts) and read back (the dev inbox,
 * api/routes/dev/). One module for both sides, so the format has one definition.
 *
 * One message = `<id>.json`, the SendGrid v3 `/mail/send` body exactly as the
 * provider client sent it plus `messageId` and `received_at`, and `<id>.html`,
 * its HTML part (to open straight from the folder). The id is the receipt time
 * and the first recipient, so the folder lists in arrival order:
 * `2026-11-23T09-14-03-512Z-jane@example.com-3f9a1c`. Files are written
 * under a temporary name and renamed, so a reader never sees half a message.
 * Nothing else is kept: the folder is the inbox, and it survives restarts.
 */

const SendGridAddress = Type.Object({ email: Type.String(), name: Type.Optional(Type.String()) });

/** What the inbox reads from a stored message (the SendGrid body has more; it is kept, not needed). */
const StoredMessageSchema = Type.Object({
  messageId: Type.Optional(Type.String()),
  received_at: Type.Optional(Type.String()),
  from: Type.Optional(SendGridAddress),
  reply_to: Type.Optional(SendGridAddress),
  subject: Type.Optional(Type.String()),
  personalizations: Type.Array(
    Type.Object({
      to: Type.Optional(Type.Array(SendGridAddress)),
      cc: Type.Optional(Type.Array(SendGridAddress)),
      bcc: Type.Optional(Type.Array(SendGridAddress)),
      subject: Type.Optional(Type.String()),
      headers: Type.Optional(Type.Record(Type.String(), Type.String())),
      custom_args: Type.Optional(Type.Record(Type.String(), Type.String())),
    }),
  ),
  content: Type.Optional(Type.Array(Type.Object({ type: Type.String(), value: Type.String() }))),
  attachments: Type.Optional(
    Type.Array(
      Type.Object({
        content: Type.String(),
        filename: Type.String(),
        type: Type.Optional(Type.String()),
        disposition: Type.Optional(Type.String()),
      }),
    ),
  ),
  headers: Type.Optional(Type.Record(Type.String(), Type.String())),
  categories: Type.Optional(Type.Array(Type.String())),
  custom_args: Type.Optional(Type.Record(Type.String(), Type.String())),
});
type StoredMessage = Static<typeof StoredMessageSchema>;

/** What the sink hands over for one accepted request. */
export interface IncomingMessage {
  /** The parsed SendGrid v3 request body. */
  body: {
    personalizations: Array<{ to?: Address[]; [key: string]: unknown }>;
    subject?: string;
    [key: string]: unknown;
  };
  /** The `X-Message-Id` the sink answered with. */
  messageId: string | undefined;
  receivedAt?: Date;
}

export interface CapturedAttachment {
  filename: string;
  /** MIME type as the sender declared it; undefined when it did not. */
  type: string | undefined;
  /** Size of the decoded content, in bytes. */
  size: number;
}

/** One line of the inbox. */
export interface MessageSummary {
  id: string;
  receivedAt: Date;
  subject: string;
  to: Address[];
  /** The Mailroom email id (`custom_args.email_id`): the key of its record in `emails`. */
  emailId: string | undefined;
  attachments: number;
}

/** One message, as the message view shows it. */
export interface CapturedMessage extends MessageSummary {
  messageId: string | undefined;
  from: Address | undefined;
  replyTo: Address | undefined;
  cc: Address[];
  bcc: Address[];
  html: string | undefined;
  text: string | undefined;
  attachmentList: CapturedAttachment[];
  categories: string[];
  customArgs: Record<string, string>;
  /** Custom headers the sender asked SendGrid to add. */
  headers: Record<string, string>;
}

/** Ids are file names the sink made: filename-safe characters only, never a path. */
const ID_PATTERN = /^[A-Za-z0-9@_-][A-Za-z0-9@._-]{0,200}$/;
export const isMessageId = (id: string): boolean => ID_PATTERN.test(id) && !id.includes('..');

// ---------------------------------------------------------------- reading

/** Stored messages never change: each file is parsed once per process for the list (per folder, by id). */
const summaries = new Map<string, Map<string, MessageSummary | null>>();

/** Every readable message in `dir`, newest first. A missing folder is an empty inbox. */
export function listMessages(dir: string): MessageSummary[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  const known = summaries.get(dir) ?? new Map<string, MessageSummary | null>();
  // Rebuilt from the folder's listing: deleted messages leave the cache too.
  const current = new Map<string, MessageSummary | null>();
  for (const name of names) {
    if (!name.endsWith('.json')) continue;
    const id = name.slice(0, -'.json'.length);
    let summary = known.get(id);
    if (summary === undefined) {
      const message = readMessage(dir, id);
      summary = message ? summaryOf(message) : null;
    }
    current.set(id, summary);
  }
  summaries.set(dir, current);
  return [...current.values()].filter((m): m is MessageSummary => m !== null).sort(newestFirst);
}

const newestFirst = (a: MessageSummary, b: MessageSummary): number =>
  b.receivedAt.getTime() - a.receivedAt.getTime() || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0);

/**
 * The messages received after the one with id `lastId`, oldest first (what a
 * reconnecting page missed); undefined when there is no message `lastId`.
 */
export function messagesAfter(dir: string, lastId: string): MessageSummary[] | undefined {
  const all = listMessages(dir);
  const at = all.findIndex((m) => m.id === lastId);
  return at < 0 ? undefined : all.slice(0, at).reverse();
}

/** One message; undefined when there is none by that id (or its file is not a stored message). */
export function readMessage(dir: string, id: string): CapturedMessage | undefined {
  if (!isMessageId(id)) return undefined;
  const file = join(dir, `${id}.json`);
  let raw: unknown;
  let modified: Date;
  try {
    raw = JSON.parse(readFileSync(file, 'utf8'));
    modified = statSync(file).mtime;
  } catch {
    // Missing, unreadable or not JSON: not a message of the sink's.
    return undefined;
  }
  if (schemaErrors(StoredMessageSchema, raw).length > 0) return undefined;
  return toMessage(id, raw as StoredMessage, modified);
}

/** The decoded bytes of attachment `index` (0-based), with its name and type. */
export function readAttachment(
  dir: string,
  id: string,
  index: number,
): { filename: string; type: string | undefined; content: Buffer } | undefined {
  if (!isMessageId(id)) return undefined;
  let raw: StoredMessage;
  try {
    raw = JSON.parse(readFileSync(join(dir, `${id}.json`), 'utf8')) as StoredMessage;
  } catch {
    return undefined;
  }
  const attachment = Array.isArray(raw.attachments) ? raw.attachments[index] : undefined;
  if (!attachment || typeof attachment.content !== 'string') return undefined;
  return {
    filename: String(attachment.filename),
    type: attachment.type,
    content: Buffer.from(attachment.content, 'base64'),
  };
}

function fileExists(file: string): boolean {
  try {
    statSync(file);
    return true;
  } catch {
    return false;
  }
}

function toMessage(id: string, stored: StoredMessage, modified: Date): CapturedMessage {
  const recipients = (field: 'to' | 'cc' | 'bcc') =>
    stored.personalizations.flatMap((p) => p[field] ?? []).map(address);
  const part = (type: string) => stored.content?.find((c) => c.type === type)?.value;
  const customArgs = Object.assign(
    {},
    stored.custom_args,
    ...stored.personalizations.map((p) => p.custom_args ?? {}),
  ) as Record<string, string>;
  const attachmentList = (stored.attachments ?? []).map((a) => ({
    filename: a.filename,
    type: a.type,
    size: Buffer.byteLength(a.content, 'base64'),
  }));
  return {
    id,
    receivedAt: receivedAt(stored.received_at, id) ?? modified,
    subject: stored.subject ?? stored.personalizations[0]?.subject ?? '',
    to: recipients('to'),
    cc: recipients('cc'),
    bcc: recipients('bcc'),
    emailId: customArgs['email_id'],
    attachments: attachmentList.length,
    attachmentList,
    messageId: stored.messageId,
    from: stored.from && address(stored.from),
    replyTo: stored.reply_to && address(stored.reply_to),
    html: part('text/html'),
    text: part('text/plain'),
    categories: stored.categories ?? [],
    customArgs,
    headers: Object.assign(
      {},
      stored.headers,
      ...stored.personalizations.map((p) => p.headers ?? {}),
    ) as Record<string, string>,
  };
}

const address = (a: { email: string; name?: string | undefined }): Address =>
  a.name ? { email: a.email, name: a.name } : { email: a.email };

/** `received_at`, else the time in the id (messages saved before `received_at` existed). */
function receivedAt(value: string | undefined, id: string): Date | undefined {
  const fromValue = value ? new Date(value) : undefined;
  if (fromValue && !Number.isNaN(fromValue.getTime())) return fromValue;
  const m = /^(\d{4}-\d{2}-\d{2})T(\d{2})-(\d{2})-(\d{2})-(\d{3})Z/.exec(id);
  if (!m) return undefined;
  const fromId = new Date(`${m[1]}T${m[2]}:${m[3]}:${m[4]}.${m[5]}Z`);
  return Number.isNaN(fromId.getTime()) ? undefined : fromId;
}

const summaryOf = (m: CapturedMessage): MessageSummary => ({
  id: m.id,
  receivedAt: m.receivedAt,
  subject: m.subject,
  to: m.to,
  emailId: m.emailId,
  attachments: m.attachments,
});

// ---------------------------------------------------------------- watching

/**
 * Calls `onMessage(id)` for every message saved into `dir` from now on (the
 * folder is created if missing). Returns the function that stops watching.
 */
export function watchMailbox(dir: string, onMessage: (id: string) => void): () => void {
  mkdirSync(dir, { recursive: true });
  const seen = new Set<string>();
  const watcher = watch(dir, { persistent: false }, (_event, name) => {
    if (typeof name !== 'string' || !name.endsWith('.json')) return;
    const id = name.slice(0, -'.json'.length);
    if (seen.has(id) || !isMessageId(id) || !fileExists(join(dir, name))) return;
    seen.add(id);
    onMessage(id);
  });
  // A folder deleted under a running inbox: stop watching; the page still reads what is there.
  watcher.on('error', () => watcher.close());
  return () => watcher.close();
}
