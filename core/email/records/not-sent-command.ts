import { CommandUsageError, stringOptions } from '../../command-line.ts';
import { isUuid } from '../../identity.ts';
import type { RecordStore } from './record-store-contract.ts';
import { statusOf } from './record.ts';

/**
 * The operator's way out of "email outcome unknown" (`npm run emails --
 * not-sent --email <id>`, infra/emails-cli.ts): Mailroom never resends such
 * an email by itself, since the provider may have it. Once the provider's
 * activity feed shows it never went out, this marks the record as one the
 * provider never took (RecordStore.confirmNotSent), so that:
 * - a reset of its workflow run sends it once, under the same email id;
 * - a new send-welcome-email run for the user sends it under a new key;
 * - a new run of any other workflow would have sent it anyway (new key).
 * An HTTP send's Idempotency-Key keeps answering the failure it stored; send
 * again with a new key.
 *
 * Returns the lines to print; throws CommandUsageError for a wrong command
 * line or a record that is not failed with an unknown outcome.
 */

const NOT_SENT_USAGE =
  "usage: npm run emails -- not-sent --email <email id>   (once the provider's activity feed shows it never went out)";

const usageError = (message: string) => new CommandUsageError(message, NOT_SENT_USAGE);

export async function runNotSentCommand(records: RecordStore, argv: readonly string[]): Promise<string[]> {
  const [command, ...rest] = argv;
  if (command !== 'not-sent') throw usageError(`unknown command: ${command ?? '(none)'}`);
  const { email } = stringOptions(rest, ['email'], NOT_SENT_USAGE);
  if (!email || !isUuid(email)) throw usageError('--email must be the email id (a UUID)');
  const emailId = email.toLowerCase();
  const confirmed = await records.confirmNotSent(emailId);
  if (confirmed)
    return [
      `email ${emailId}: recorded as never taken by the provider; a reset of its run, or a new welcome run, sends it`,
    ];
  const record = await records.findById(emailId);
  if (!record) throw usageError(`no email ${emailId}`);
  throw usageError(
    `email ${emailId} is ${statusOf(record)}${record.error ? ` (${record.error})` : ''}, not failed with an unknown outcome: nothing to confirm`,
  );
}
