import type { Db } from 'mongodb';
import type { Config } from '../../../config.ts';
import type { Logger } from '../../../logger.ts';
import { createSendGridProvider, type MailProvider } from '../provider.ts';
import { providerRate } from '../quotas/provider-rate.ts';
import { withRate } from '../quotas/rate-gate.ts';
import { createFailover, DEFAULT_BREAKER } from './failover.ts';
import { createSmtpProvider } from './smtp.ts';

/**
 * The providers EMAIL_PROVIDERS names, in that order: one alone is used as
 * it is; two go behind failover with a circuit breaker each (failover.ts).
 * SendGrid without SENDGRID_API_KEY is left out (a send then fails with
 * `email service not configured.` when nothing else is configured).
 * A provider with a maximum rate (…_MAX_PER_SECOND) takes a message only
 * when the rate, counted in `db` for every replica, has room (rate-gate.ts).
 */
export function createProviders(config: Config, logger: Logger, db: Db): MailProvider | undefined {
  const providers = config.providers.order.flatMap((name) => {
    const provider =
      name === 'smtp'
        ? config.providers.smtpUrl && createSmtpProvider(config.providers.smtpUrl)
        : createSendGridProvider(config);
    if (!provider) return [];
    const perSecond = config.providers.maxPerSecond[name];
    return [perSecond ? withRate(provider, providerRate(db, name, perSecond)) : provider];
  });
  if (providers.length <= 1) return providers[0];
  return createFailover(providers, logger, {
    ...DEFAULT_BREAKER,
    cooldownMs: config.providers.breakerCooldownMs,
  });
}
