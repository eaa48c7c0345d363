import { Value } from '@sinclair/typebox/value';
import proxyaddr from 'proxy-addr';
import { firstProblem, httpOrigin, isSenderEntry, normalizeSenderEntry, schemaErrors } from './validation.ts';
import type { LOG_LEVELS } from './config-env.ts';
import { EnvSchema, type AuthMode, type Env } from './config-env.ts';
import { isValidMailbox, parseMailbox, type Address } from './email/addresses.ts';
import { sendgridVerificationKey } from './email/webhook-key.ts';

export type { AuthMode } from './config-env.ts';

/** Never echoed in a configuration error (it would land in logs). */
const SECRET_VARIABLES = new Set(['MAILROOM_SECRET', 'SENDGRID_API_KEY', 'METRICS_TOKEN', 'SMTP_URL']);
const HINTS: Record<string, string> = {
  MAILROOM_SECRET: ': 32+ random characters, e.g. `openssl rand -hex 32` (npm run dev makes one)',
};

export interface Config {
  port: number;
  /** A listener of its own for `GET /metrics`; undefined: /metrics is served on `port`. */
  metricsPort: number | undefined;
  /** When set, `GET /metrics` needs `Authorization: Bearer <token>` (Prometheus' `authorization` option). */
  metricsToken: string | undefined;
  /** host:port where the worker serves the Temporal SDK's Prometheus metrics; undefined: not served. */
  workerMetricsAddress: string | undefined;
  publicBaseUrl: string;
  mongodbUri: string;
  temporal: { address: string; namespace: string; taskQueue: string };
  sendgrid: {
    apiKey: string | undefined;
    baseUrl: string;
    webhookPublicKey: string | undefined;
    /** Accept unsigned Event Webhook requests when no public key is set (dev only). */
    webhookAllowUnsigned: boolean;
    /** How long a connection may take to be ready before the send counts as not taken (fails over). */
    connectTimeoutMs: number;
  };
  /** Providers in failover order (EMAIL_PROVIDERS); SMTP's relay URL (SMTP_URL). */
  providers: {
    order: Array<'sendgrid' | 'smtp'>;
    smtpUrl: string | undefined;
    breakerCooldownMs: number;
    /** Each provider's maximum sends per second, shared by every replica (SENDGRID_MAX_PER_SECOND, SMTP_MAX_PER_SECOND); absent: unlimited. */
    maxPerSecond: Partial<Record<'sendgrid' | 'smtp', number>>;
  };
  emailFrom: string;
  /** EMAIL_REPLY_TO: the Reply-To of sends that name none. */
  emailReplyTo: Address | undefined;
  /** Domains or addresses every company may send as, besides EMAIL_FROM (core/email/send/senders/sender-policy.ts). */
  allowedSenders: string[];
  blockedEmailDomains: string[];
  workerConcurrency: number;
  /** The welcome email's sign-in link (LOGIN_URL, else APP_URL + /login). */
  loginUrl: string;
  /** The EIN emails' dashboard link (DASHBOARD_URL, else APP_URL + /dashboard). */
  dashboardUrl: string;
  /**
   * The workflow emails' links that fell back to the gateway's own origin (no
   * APP_URL nor the variable itself): the gateway serves no such page, so the
   * worker warns at start.
   */
  appLinksOnGateway: string[];
  supportEmail: string;
  attachmentFetchTimeoutMs: number;
  workflowBundlePath: string | undefined;
  workerStartupTimeoutMs: number;
  logLevel: (typeof LOG_LEVELS)[number];
  /** Human-readable logs (pino-pretty) instead of JSON lines. */
  logPretty: boolean;
  /** `api-key`: callers prove who they are with a key; `trusted-headers`: a proxy did, and set the headers. */
  authMode: AuthMode;
  secret: string;
  signup: {
    /** Origins the links of an unauthenticated signup-template send may point at; empty (unset): none. */
    linkOrigins: string[];
    /** Unauthenticated signup sends per recipient address per hour. */
    perRecipientPerHour: number;
    /** Unauthenticated signup sends per client IP per minute. */
    perIpPerMinute: number;
  };
  /** Addresses (or CIDRs) of proxies whose X-Forwarded-For is believed. */
  trustedProxies: string[];
  /** How long a gateway request may wait on the database or Temporal before it is answered 503 (api/request-deadline.ts). */
  requestDeadlineMs: number;
  /** How long a gateway stopped with SIGTERM lets its requests finish (api/graceful-drain.ts). */
  shutdownGraceMs: number;
  /** Time a request body has to arrive, plus a second per 500 bytes received (api/middleware/body-stream.ts). */
  bodyReceiveMs: number;
  /** Bytes of key holders' request bodies one gateway holds at once, a company half; callers without credentials an eighth more (api/middleware/body-budget.ts). */
  bodyBytesInFlight: number;
  /** How long a click-tracking link redirects after its email was sent (docs/click-tracking.md). */
  clickLinkLifetimeMs: number;
  /** The shortest `every` a recurring schedule may have (protects the cluster from a company's 1 s loop). */
  scheduleMinIntervalSeconds: number;
  /** What one company (per mode) may keep scheduled: emails not sent yet, and characters of their stored requests. */
  scheduledPending: { maxCount: number; maxChars: number };
  /** Open connections one client network may hold on a gateway (TRUSTED_PROXIES excepted); one more is 429. */
  maxConnectionsPerClient: number;
  /** `GET …?wait=` requests one company may have waiting at once on one gateway; past it, answered at once. */
  workflowWaitsPerCompany: number;
  /**
   * The dev mail sink's folder: when set (only `npm run dev` sets it, and only
   * while the sink is on), the gateway serves the dev inbox (/dev/inbox) and the
   * template gallery (/dev/templates). Unset: those routes do not exist.
   */
  devInboxDir: string | undefined;
  /** Outbound webhooks (docs/webhooks.md). */
  webhooks: {
    /** One delivery attempt's POST, connection to last byte. */
    timeoutMs: number;
    /** The first retry's delay; each next one doubles, up to `retryMaxSeconds`. */
    retryInitialSeconds: number;
    retryMaxSeconds: number;
    /** A delivery still failing this long after its first attempt ends `failed`. */
    giveUpSeconds: number;
    /** Consecutive failed attempts (no 2xx between) after which an endpoint is disabled. */
    disableAfterFailedAttempts: number;
    /** Private addresses (or CIDRs) an endpoint may still reach: an operator's own services. */
    allowedAddresses: string[];
  };
  /** Days email records and step keys are kept (pruner.ts); 0: forever. */
  emailRetentionDays: number;
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** Reads and validates the environment. Throws ConfigError with one line naming the bad variable. */
export function loadConfig(source: NodeJS.ProcessEnv = process.env): Config {
  const known = Object.keys(EnvSchema.properties);
  // Empty strings mean "unset" so `FOO=` in a .env file falls back to the default.
  const raw: Record<string, string> = {};
  for (const key of known) {
    const value = source[key];
    if (value !== undefined && value !== '') raw[key] = value;
  }
  const env = Value.Convert(EnvSchema, raw);
  const errors = schemaErrors(EnvSchema, env);
  if (errors.length > 0) {
    const problem = firstProblem(errors);
    const variable = problem.kind === 'missing' ? (problem.fields[0] ?? '?') : problem.field;
    const what =
      problem.kind === 'missing'
        ? 'is required'
        : problem.kind === 'invalid'
          ? problem.problem
          : 'is invalid';
    const shown =
      source[variable] === undefined || SECRET_VARIABLES.has(variable)
        ? ''
        : ` (got ${JSON.stringify(source[variable])})`;
    throw new ConfigError(`invalid configuration: ${variable} ${what}${shown}${HINTS[variable] ?? ''}`);
  }
  const e = env as Env;
  const fail = (variable: string, problem: string) =>
    new ConfigError(
      `invalid configuration: ${variable} ${problem} (got ${JSON.stringify(source[variable])})`,
    );
  if (e.SENDGRID_WEBHOOK_PUBLIC_KEY !== undefined) {
    try {
      sendgridVerificationKey(e.SENDGRID_WEBHOOK_PUBLIC_KEY);
    } catch {
      throw fail('SENDGRID_WEBHOOK_PUBLIC_KEY', 'must be the base64 ECDSA verification key SendGrid shows');
    }
  }
  const providerOrder = e.EMAIL_PROVIDERS.split(',') as Array<'sendgrid' | 'smtp'>;
  if (providerOrder.includes('smtp') && e.SMTP_URL === undefined)
    throw new ConfigError('invalid configuration: SMTP_URL is required when EMAIL_PROVIDERS names smtp');
  if (new Set(providerOrder).size !== providerOrder.length)
    throw fail('EMAIL_PROVIDERS', 'must name each provider once');
  const list = (value: string) =>
    value
      .split(',')
      .map((item) => item.trim())
      .filter(Boolean);
  const from = parseMailbox(e.EMAIL_FROM);
  if (!from || !isValidMailbox(from))
    throw fail('EMAIL_FROM', 'must be an address or "Name <address>", e.g. Acme <no-reply@acme.com>');
  const replyTo = e.EMAIL_REPLY_TO === undefined ? undefined : parseMailbox(e.EMAIL_REPLY_TO);
  if (e.EMAIL_REPLY_TO !== undefined && (!replyTo || !isValidMailbox(replyTo)))
    throw fail('EMAIL_REPLY_TO', 'must be an address or "Name <address>", e.g. Acme Support <help@acme.com>');
  const publicBaseUrl = withoutTrailingSlashes(e.PUBLIC_BASE_URL ?? `http://localhost:${e.PORT}`);
  // The workflow emails link to the product's app; without APP_URL, to this gateway's origin (dev).
  const appUrl = withoutTrailingSlashes(e.APP_URL ?? publicBaseUrl);
  if (e.METRICS_PORT !== undefined && e.METRICS_PORT === e.PORT)
    throw fail('METRICS_PORT', 'must differ from PORT (unset it to serve /metrics on PORT)');
  return {
    port: e.PORT,
    metricsPort: e.METRICS_PORT,
    metricsToken: e.METRICS_TOKEN,
    workerMetricsAddress: e.WORKER_METRICS_ADDRESS,
    publicBaseUrl,
    mongodbUri: e.MONGODB_URI,
    temporal: {
      address: e.TEMPORAL_ADDRESS,
      namespace: e.TEMPORAL_NAMESPACE,
      taskQueue: e.TEMPORAL_TASK_QUEUE,
    },
    providers: {
      order: providerOrder,
      smtpUrl: e.SMTP_URL,
      breakerCooldownMs: e.PROVIDER_BREAKER_COOLDOWN_SECONDS * 1000,
      maxPerSecond: {
        ...(e.SENDGRID_MAX_PER_SECOND !== undefined ? { sendgrid: e.SENDGRID_MAX_PER_SECOND } : {}),
        ...(e.SMTP_MAX_PER_SECOND !== undefined ? { smtp: e.SMTP_MAX_PER_SECOND } : {}),
      },
    },
    sendgrid: {
      apiKey: e.SENDGRID_API_KEY,
      baseUrl: withoutTrailingSlashes(e.SENDGRID_BASE_URL),
      webhookPublicKey: e.SENDGRID_WEBHOOK_PUBLIC_KEY,
      webhookAllowUnsigned: e.SENDGRID_WEBHOOK_ALLOW_UNSIGNED,
      connectTimeoutMs: e.SENDGRID_CONNECT_TIMEOUT_MS,
    },
    emailFrom: e.EMAIL_FROM,
    emailReplyTo: replyTo,
    allowedSenders: list(e.ALLOWED_SENDERS ?? '').map((value) => {
      const entry = normalizeSenderEntry(value);
      if (!isSenderEntry(entry))
        throw fail(
          'ALLOWED_SENDERS',
          'must be a comma list of domains (acme.com) or addresses (billing@acme.com)',
        );
      return entry;
    }),
    blockedEmailDomains: list(e.BLOCKED_EMAIL_DOMAINS).map((d) => d.toLowerCase()),
    workerConcurrency: e.WORKER_CONCURRENCY,
    loginUrl: e.LOGIN_URL ?? `${appUrl}/login`,
    dashboardUrl: e.DASHBOARD_URL ?? `${appUrl}/dashboard`,
    appLinksOnGateway: [
      ...(e.APP_URL || e.LOGIN_URL ? [] : ['LOGIN_URL']),
      ...(e.APP_URL || e.DASHBOARD_URL ? [] : ['DASHBOARD_URL']),
    ],
    supportEmail: e.SUPPORT_EMAIL,
    attachmentFetchTimeoutMs: e.ATTACHMENT_FETCH_TIMEOUT_MS,
    workflowBundlePath: e.WORKFLOW_BUNDLE_PATH,
    workerStartupTimeoutMs: e.WORKER_STARTUP_TIMEOUT_SECONDS * 1000,
    logLevel: e.LOG_LEVEL,
    logPretty: e.LOG_PRETTY,
    authMode: e.AUTH_MODE,
    secret: e.MAILROOM_SECRET,
    signup: {
      // Unset allows no origin: a default would have to guess where the
      // application lives, and the gateway's own origin serves a redirect.
      linkOrigins: list(e.SIGNUP_LINK_ORIGINS ?? '').map((value) => {
        const origin = httpOrigin(value);
        if (!origin) throw fail('SIGNUP_LINK_ORIGINS', 'must be a comma list of http(s) origins');
        return origin;
      }),
      perRecipientPerHour: e.SIGNUP_LIMIT_PER_RECIPIENT,
      perIpPerMinute: e.SIGNUP_LIMIT_PER_IP,
    },
    trustedProxies: trustedProxies(list(e.TRUSTED_PROXIES), fail),
    requestDeadlineMs: e.REQUEST_DEADLINE_SECONDS * 1000,
    shutdownGraceMs: e.SHUTDOWN_GRACE_SECONDS * 1000,
    bodyReceiveMs: e.BODY_TIMEOUT_SECONDS * 1000,
    bodyBytesInFlight: e.BODY_BYTES_IN_FLIGHT_MB * 1024 * 1024,
    clickLinkLifetimeMs: e.CLICK_LINK_LIFETIME_DAYS * 86_400_000,
    scheduleMinIntervalSeconds: e.SCHEDULE_MIN_INTERVAL_SECONDS,
    scheduledPending: {
      maxCount: e.SCHEDULED_MAX_PENDING,
      maxChars: e.SCHEDULED_MAX_PENDING_MB * 1024 * 1024,
    },
    workflowWaitsPerCompany: e.WORKFLOW_WAITS_PER_COMPANY,
    maxConnectionsPerClient: e.MAX_CONNECTIONS_PER_CLIENT,
    devInboxDir: e.DEV_INBOX_DIR,
    webhooks: {
      timeoutMs: e.WEBHOOK_TIMEOUT_SECONDS * 1000,
      retryInitialSeconds: e.WEBHOOK_RETRY_INITIAL_SECONDS,
      retryMaxSeconds: Math.max(e.WEBHOOK_RETRY_MAX_SECONDS, e.WEBHOOK_RETRY_INITIAL_SECONDS),
      giveUpSeconds: e.WEBHOOK_GIVE_UP_SECONDS,
      disableAfterFailedAttempts: e.WEBHOOK_DISABLE_AFTER_FAILED_ATTEMPTS,
      allowedAddresses: list(e.WEBHOOK_ALLOWED_ADDRESSES),
    },
    emailRetentionDays: e.EMAIL_RETENTION_DAYS,
  };
}

/** Addresses, CIDRs or proxy-addr's names (loopback, linklocal, uniquelocal); a typo stops the start. */
function trustedProxies(
  values: string[],
  fail: (variable: string, problem: string) => ConfigError,
): string[] {
  try {
    proxyaddr.compile(values);
  } catch {
    throw fail(
      'TRUSTED_PROXIES',
      'must be a comma list of IP addresses, CIDRs, loopback, linklocal or uniquelocal',
    );
  }
  return values;
}

function withoutTrailingSlashes(url: string): string {
  let end = url.length;
  while (end > 0 && url[end - 1] === '/') end--;
  return url.slice(0, end);
}

/** For entry points: load the configuration or print one clear line and exit. */
export function loadConfigOrExit(source: NodeJS.ProcessEnv = process.env): Config {
  try {
    return loadConfig(source);
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(err.message);
      process.exit(1);
    }
    throw err;
  }
}
