import { randomBytes } from 'node:crypto';
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { IncomingMessage } from './mailbox.ts';

/**
 * The dev mail sink's writing side: each accepted message as a `.html` (what
 * the browser shows) and a `.json` (what the inbox lists), written atomically,
 * the `.json` last. mailbox.ts reads them.
 */

/** Saves one accepted message; returns its id and the path of its `.html` file. */
export function saveMessage(dir: string, message: IncomingMessage): { id: string; htmlFile: string } {
  mkdirSync(dir, { recursive: true });
  const receivedAt = message.receivedAt ?? new Date();
  const firstTo = message.body.personalizations[0]?.to?.[0]?.email ?? 'unknown';
  // Recipient addresses come from API callers: keep only filename-safe characters.
  const safeTo = firstTo
    .replace(/[^a-zA-Z0-9@._-]/g, '_')
    .replace(/\.{2,}/g, '_')
    .slice(0, 80);
  const id = `${stamp(receivedAt)}-${safeTo}-${randomBytes(3).toString('hex')}`;
  const content = Array.isArray(message.body['content'])
    ? (message.body['content'] as Array<{ type?: unknown; value?: unknown }>)
    : [];
  const part = (type: string) => {
    const value = content.find((c) => c.type === type)?.value;
    return typeof value === 'string' ? value : undefined;
  };
  const htmlFile = join(dir, `${id}.html`);
  writeAtomically(htmlFile, part('text/html') ?? `<pre>${escapeHtml(part('text/plain') ?? '')}</pre>`);
  // The .json last: it is what makes the message appear in the inbox.
  const stored = { messageId: message.messageId, received_at: receivedAt.toISOString(), ...message.body };
  writeAtomically(join(dir, `${id}.json`), JSON.stringify(stored, null, 2));
  return { id, htmlFile };
}

/** `2026-11-23T09-14-03-512Z`: an ISO time with filename-safe characters; sorts like the time. */
function stamp(at: Date): string {
  return at.toISOString().replace(/[:.]/g, '-');
}

function writeAtomically(file: string, data: string): void {
  const temporary = `${file}.${process.pid}.tmp`;
  writeFileSync(temporary, data);
  renameSync(temporary, file);
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
