import type { Config } from '../../../config.ts';
import type { Logger } from '../../../logger.ts';
import { createSendGridProvider, type MailProvider } from '../provider.ts';
import { createFailover, DEFAULT_BREAKER } from './failover.ts';
import { createSmtpProvider } from './smtp.ts';

/**
 * The providers EMAIL_PROVIDERS names, in that order: one alone is used as
 * it is; two go behind failover with a circuit breaker each (failover.ts).
 * SendGrid without SENDGRID_API_KEY is left out (a send then fails with
 * `email service not configured.` when nothing else is configured).
 */
export function createProviders(config: Config, logger: Logger): MailProvider | undefined {
  const providers = config.providers.order.flatMap((name) => {
    if (name === 'smtp')
      return config.providers.smtpUrl ? [createSmtpProvider(config.providers.smtpUrl)] : [];
    const sendgrid = createSendGridProvider(config);
    return sendgrid ? [sendgrid] : [];
  });
  if (providers.length <= 1) return providers[0];
  return createFailover(providers, logger, {
    ...DEFAULT_BREAKER,
    cooldownMs: config.providers.breakerCooldownMs,
  });
}
