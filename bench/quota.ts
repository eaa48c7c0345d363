import { performance } from 'node:perf_hooks';
import { randomUUID } from 'node:crypto';
import { loadConfig } from '../core/config.ts';
import { createEmailService } from '../core/email/service.ts';
import { authenticatedAs } from '../core/identity.ts';
import { createLogger } from '../core/logger.ts';
import { FakeSendGrid } from '../infra/fake-sendgrid.ts';
import { invoiceBody } from '../test/support/sample-emails.ts';
import type { BenchEnv } from './env.ts';
import { figures, type Ratio } from './lib/measure.ts';

/** The configured provider rate the quota line holds the senders to. */
export const QUOTA_RATE = 50;

/**
 * `quota`: SENDGRID_MAX_PER_SECOND=50 shared by two senders, two email
 * services on the bench's database (as two replicas are), each keeping
 * `inFlight` sends going for `seconds`, through the real SendGrid client to a
 * fake SendGrid of its own that stamps each arrival. The ratio is the
 * achieved rate (arrivals from the first to the last) ÷ 50: within 5% of 1
 * either way (the target says ≥ 0.95; the note says when it went over 1.05).
 */
export async function benchQuota(env: BenchEnv, opts: { seconds: number; inFlight: number }): Promise<Ratio> {
  const fake = await new FakeSendGrid().start();
  const arrivals: number[] = [];
  fake.onAccepted = () => arrivals.push(performance.now());
  const config = loadConfig({
    ...env.serviceEnv,
    MONGODB_URI: env.mongoUri,
    SENDGRID_API_KEY: 'SG.bench',
    SENDGRID_BASE_URL: fake.url,
    SENDGRID_MAX_PER_SECOND: String(QUOTA_RATE),
    AUTH_MODE: 'trusted-headers',
    LOG_LEVEL: 'warn',
  });
  const logger = createLogger('bench-quota', config);
  const senders = [0, 1].map(() => createEmailService({ db: env.database.db, config, logger }));
  const caller = { companyId: randomUUID(), organizationId: randomUUID(), userId: randomUUID() };
  let refused = 0;
  try {
    const until = performance.now() + opts.seconds * 1000;
    const loop = async (email: (typeof senders)[number]) => {
      while (performance.now() < until)
        await email.send(invoiceBody(), authenticatedAs(caller)).catch(() => refused++);
    };
    await Promise.all(senders.flatMap((email) => Array.from({ length: opts.inFlight }, () => loop(email))));
  } finally {
    await Promise.all(senders.map((s) => s.close()));
    await fake.stop();
  }
  const span = (arrivals.at(-1)! - arrivals[0]!) / 1000;
  const achieved = (arrivals.length - 1) / span;
  const gaps = arrivals.slice(1).map((t, i) => t - arrivals[i]!);
  const ours = { ...figures('quota: two senders, SENDGRID_MAX_PER_SECOND=50', gaps, span), ops: achieved };
  const floor = { ...figures(`quota: the configured rate, ${QUOTA_RATE}/s`, [], span), ops: QUOTA_RATE };
  const value = achieved / QUOTA_RATE;
  console.log(
    `quota achieved ${achieved.toFixed(2)}/s configured ${QUOTA_RATE}/s sent ${arrivals.length} refused ${refused}`,
  );
  return {
    name: 'quota',
    value,
    target: 0.95,
    ours,
    floor,
    basis: 'throughput',
    note: `within 5% either way: ${Math.abs(value - 1) <= 0.05 ? 'yes' : 'NO'}; latencies are the gaps between arrivals`,
  };
}
