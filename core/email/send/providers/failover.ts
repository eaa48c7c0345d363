import CircuitBreaker from 'opossum';
import type { Logger } from '../../../logger.ts';
import { isMailroomError, MailroomError } from '../../../errors.ts';
import { providerUnavailable } from '../../email-messages.ts';
import { HandOverFailed, handOver } from '../hand-over.ts';
import type { MailProvider, OutgoingMail } from '../provider.ts';
import { providerBreakerState, providerFailovers, providerSends } from '../../../metrics.ts';

export interface BreakerOptions {
  /** Failed share of recent calls (%) past which a provider is not tried for `cooldownMs`. */
  errorThresholdPercentage: number;
  /** Calls in the window before the share counts. */
  volumeThreshold: number;
  /** How long an open breaker skips its provider before one probe call. */
  cooldownMs: number;
}

export const DEFAULT_BREAKER: BreakerOptions = {
  errorThresholdPercentage: 50,
  volumeThreshold: 5,
  cooldownMs: 30_000,
};

const STATE_VALUE = { closed: 0, halfOpen: 1, open: 2 } as const;

/**
 * Providers in order (EMAIL_PROVIDERS), each behind a circuit breaker
 * (opossum). A send goes to the first provider whose breaker lets it through;
 * it goes on to the next only when the failure proves the message was not
 * taken (`transient`: refused connection, DNS, 5xx/4xx-temporary, a timeout
 * before the request was written) or the breaker is open. A rejection of the
 * message (`provider_rejected`) is the answer; an unknown outcome (the request
 * was written, no answer) is never sent elsewhere: that could deliver twice.
 * Only transient failures count against a breaker. A provider at its maximum
 * rate (rate-gate.ts) is passed over like a down one, without counting
 * against its breaker; when no provider takes the send and one of them was
 * only at its rate, the send fails `rate_limited` with the shortest wait.
 */
export function createFailover(
  providers: MailProvider[],
  logger: Logger,
  options = DEFAULT_BREAKER,
): MailProvider {
  const guarded = providers.map((provider) => {
    const breaker = new CircuitBreaker((mail: OutgoingMail) => provider.send(mail), {
      timeout: false, // each provider has its own timeout, classified by it
      errorThresholdPercentage: options.errorThresholdPercentage,
      volumeThreshold: options.volumeThreshold,
      resetTimeout: options.cooldownMs,
      // A rejection or an unknown outcome says nothing about the provider being down.
      errorFilter: (err: unknown) => !(isMailroomError(err) && err.kind === 'transient'),
    });
    const report = (state: keyof typeof STATE_VALUE) => () => {
      providerBreakerState.set({ provider: provider.name }, STATE_VALUE[state]);
      logger.warn({ provider: provider.name, breaker: state }, `provider breaker ${state}`);
    };
    breaker.on('open', report('open'));
    breaker.on('halfOpen', report('halfOpen'));
    breaker.on('close', report('closed'));
    providerBreakerState.set({ provider: provider.name }, STATE_VALUE.closed);
    return { provider, breaker };
  });

  return {
    name: providers.map((p) => p.name).join(','),
    waitsForRate: providers.some((p) => p.waitsForRate === true),
    async send(mail) {
      let lastFailure: MailroomError | undefined;
      let rateLimited: MailroomError | undefined;
      for (const [index, { provider, breaker }] of guarded.entries()) {
        if (index > 0 && lastFailure)
          providerFailovers.inc({ from: guarded[index - 1]!.provider.name, to: provider.name });
        // A provider with a rate runs it after its wait; for one without, it runs here.
        if (provider.waitsForRate !== true && !breaker.opened) await handOver(mail);
        try {
          const sent = await breaker.fire(mail);
          providerSends.inc({ provider: provider.name, outcome: 'ok' });
          return { ...sent, provider: provider.name };
        } catch (err) {
          // Our own work before the hand-over failed: no provider was called.
          if (err instanceof HandOverFailed) throw err;
          if (breaker.opened && !isMailroomError(err)) {
            providerSends.inc({ provider: provider.name, outcome: 'skipped' });
            lastFailure = new MailroomError(
              'transient',
              providerUnavailable(`${provider.name} circuit open`),
              {
                cause: err,
              },
            );
            continue;
          }
          const failure = isMailroomError(err)
            ? err
            : new MailroomError('transient', providerUnavailable(String((err as Error)?.message ?? err)), {
                cause: err,
              });
          providerSends.inc({ provider: provider.name, outcome: failure.kind });
          if (failure.kind === 'rate_limited') {
            // At its rate for longer than the send waits: the next one may have room.
            rateLimited = soonest(rateLimited, failure);
            lastFailure = failure;
            continue;
          }
          if (failure.kind !== 'transient') throw failure;
          logger.warn(
            { provider: provider.name, reason: failure.message, email_id: mail.emailId },
            'provider failed; trying the next',
          );
          lastFailure = failure;
        }
      }
      // Every provider refused or down, one of them only for its rate: that one says when to come back.
      throw rateLimited ?? lastFailure ?? new MailroomError('transient', providerUnavailable('no provider'));
    },
  };
}

/** Of two rate refusals, the one that can be retried sooner. */
function soonest(a: MailroomError | undefined, b: MailroomError): MailroomError {
  return a && (a.retryAfterSeconds ?? Infinity) <= (b.retryAfterSeconds ?? Infinity) ? a : b;
}
