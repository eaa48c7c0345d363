import { CommandUsageError, stringOptions } from '../../../command-line.ts';
import { isUuid } from '../../../identity.ts';
import { isSenderEntry, normalizeSenderEntry as normalizeEntry } from '../../../validation.ts';
import type { SenderPolicy } from './sender-policy.ts';

/**
 * The operator's senders command (`npm run keys -- senders …`,
 * infra/keys-cli.ts), apart from process concerns so tests run it against a
 * real database:
 *
 *   senders --company <uuid> --allow acme.com,billing@other.com   sets the company's list
 *   senders --company <uuid> --allow none                         removes it
 *   senders --company <uuid>                                      shows it
 *
 * Returns the lines to print; throws CommandUsageError for a wrong command line.
 */

const SENDERS_USAGE =
  'usage: npm run keys -- senders --company <uuid> [--allow <domain|address>,…|none]   (the from addresses a company may use)';

const usageError = (message: string) => new CommandUsageError(message, SENDERS_USAGE);

export async function runSendersCommand(policy: SenderPolicy, argv: readonly string[]): Promise<string[]> {
  const { company, allow } = stringOptions(argv, ['company', 'allow'], SENDERS_USAGE);
  if (!company || !isUuid(company)) throw usageError('--company must be the company UUID');
  const companyId = company.toLowerCase();
  if (allow !== undefined) {
    const entries =
      allow === 'none'
        ? null
        : allow
            .split(',')
            .map(normalizeEntry)
            .filter((e) => e.length > 0);
    if (entries !== null && (entries.length === 0 || !entries.every(isSenderEntry)))
      throw usageError(
        '--allow must be a comma list of domains (acme.com) or addresses (billing@acme.com), or none',
      );
    await policy.setList(companyId, entries);
  }
  const list = await policy.listOf(companyId);
  const prefix = allow === undefined ? '' : 'set: ';
  return [
    list === null
      ? `${prefix}company ${companyId} has no senders of its own: it may send as EMAIL_FROM and ALLOWED_SENDERS (replicas apply changes within 5 s)`
      : `${prefix}company ${companyId} may also send as: ${list.join(', ')} (replicas apply changes within 5 s)`,
  ];
}
