import { parseArgs } from 'node:util';
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
 * Returns the lines to print; throws QuotaUsageError for a wrong command line.
 */
export class QuotaUsageError extends Error {}

export const QUOTA_USAGE =
  'usage: npm run keys -- quota --company <uuid> [--daily <n>|none]   (a daily sending limit; none removes it)';

export async function runQuotaCommand(quotas: DailyQuotas, argv: readonly string[]): Promise<string[]> {
  let values: { company?: string | undefined; daily?: string | undefined };
  try {
    ({ values } = parseArgs({
      args: [...argv],
      options: { company: { type: 'string' }, daily: { type: 'string' } },
    }));
  } catch (err) {
    throw new QuotaUsageError((err as Error).message);
  }
  const { company, daily } = values;
  if (!company || !isUuid(company)) throw new QuotaUsageError('--company must be the company UUID');
  const companyId = company.toLowerCase();
  if (daily !== undefined) {
    const limit = daily === 'none' ? null : Number(daily);
    if (limit !== null && !(Number.isSafeInteger(limit) && limit >= 1))
      throw new QuotaUsageError('--daily must be a whole number of sends (1 or more), or none');
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
