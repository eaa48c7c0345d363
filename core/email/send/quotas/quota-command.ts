import { CommandUsageError, stringOptions } from '../../../command-line.ts';
import { isUuid } from '../../../identity.ts';
import type { DailyQuotas } from './daily-quota.ts';

/**
 * The operator's quota command (`npm run keys -- quota …`, infra/keys-cli.ts),
 * apart from process concerns so tests run it against a real database:
 *
 *   quota --company <uuid> --daily <n>     sets the company's daily limit
 *   quota --company <uuid> --daily none    removes it
 *   quota --company <uuid>                 shows it and today's use
 *
 * Returns the lines to print; throws CommandUsageError for a wrong command line.
 */

const QUOTA_USAGE =
  'usage: npm run keys -- quota --company <uuid> [--daily <n>|none]   (a daily sending limit; none removes it)';

const usageError = (message: string) => new CommandUsageError(message, QUOTA_USAGE);

export async function runQuotaCommand(quotas: DailyQuotas, argv: readonly string[]): Promise<string[]> {
  const { company, daily } = stringOptions(argv, ['company', 'daily'], QUOTA_USAGE);
  if (!company || !isUuid(company)) throw usageError('--company must be the company UUID');
  const companyId = company.toLowerCase();
  if (daily !== undefined) {
    const limit = daily === 'none' ? null : Number(daily);
    if (limit !== null && !(Number.isSafeInteger(limit) && limit >= 1))
      throw usageError('--daily must be a whole number of sends (1 or more), or none');
    await quotas.setLimit(companyId, limit);
  }
  const status = await quotas.status(companyId);
  const prefix = daily === undefined ? '' : 'set: ';
  if (status.daily_limit === null)
    return [`${prefix}company ${companyId} has no daily sending limit (replicas apply changes within 5 s)`];
  return [
    `${prefix}company ${companyId} may send ${status.daily_limit} emails per UTC day ` +
      `(replicas apply changes within 5 s); used today ${status.used_today}, ` +
      `remaining ${status.remaining}, resets ${status.resets_at}`,
  ];
}
