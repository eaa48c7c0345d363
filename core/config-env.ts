import { Type, type Static } from '@sinclair/typebox';

/**
 * Every environment variable Mailroom reads, in one schema: it validates the
 * environment, gives the Config type, and .env.example documents the same list.
 * Values arrive as strings and are converted to the schema's types first.
 */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export const AUTH_MODES = ['api-key', 'trusted-headers'] as const;
export type AuthMode = (typeof AUTH_MODES)[number];

const enumOf = <T extends string>(values: readonly T[], defaultValue: T) =>
  Type.Unsafe<T>(Type.String({ enum: [...values], default: defaultValue }));

export const EnvSchema = Type.Object({
  PORT: Type.Integer({ minimum: 1, maximum: 65535, default: 3000 }),
  METRICS_PORT: Type.Optional(Type.Integer({ minimum: 1, maximum: 65535 })),
  WORKER_METRICS_ADDRESS: Type.Optional(Type.String({ pattern: '^[^\\s]+:\\d+$' })),
  METRICS_TOKEN: Type.Optional(Type.String({ minLength: 16, pattern: '^\\S+$' })),
  PUBLIC_BASE_URL: Type.Optional(Type.String({ format: 'uri', pattern: '^https?://' })),
  MONGODB_URI: Type.String({
    pattern: '^mongodb(\\+srv)?://',
    default: 'mongodb://127.0.0.1:27017/mailroom',
  }),
  TEMPORAL_ADDRESS: Type.String({ pattern: '^[^\\s:]+:\\d+$', default: '127.0.0.1:7233' }),
  TEMPORAL_NAMESPACE: Type.String({ minLength: 1, default: 'default' }),
  TEMPORAL_TASK_QUEUE: Type.String({ minLength: 1, default: 'mailroom' }),
  SENDGRID_API_KEY: Type.Optional(Type.String({ minLength: 1 })),
  SENDGRID_BASE_URL: Type.String({
    format: 'uri',
    pattern: '^https?://',
    default: 'https://api.sendgrid.com',
  }),
  SENDGRID_WEBHOOK_PUBLIC_KEY: Type.Optional(Type.String({ minLength: 1 })),
  /** How long a connection to SendGrid may take to be ready (TCP and TLS) before the send fails over. */
  SENDGRID_CONNECT_TIMEOUT_MS: Type.Integer({ minimum: 100, maximum: 60_000, default: 10_000 }),
  EMAIL_FROM: Type.String({ minLength: 3, default: 'Mailroom <no-reply@mailroom.example.com>' }),
  /** The Reply-To of sends that name none (an address or `Name <address>`). */
  EMAIL_REPLY_TO: Type.Optional(Type.String({ minLength: 3 })),
  BLOCKED_EMAIL_DOMAINS: Type.String({ default: '' }),
  WORKER_CONCURRENCY: Type.Integer({ minimum: 1, maximum: 1000, default: 20 }),
  /** The product's own web app (where its users sign in): the origin of the workflow emails' links. */
  APP_URL: Type.Optional(Type.String({ format: 'uri', pattern: '^https?://' })),
  LOGIN_URL: Type.Optional(Type.String({ format: 'uri', pattern: '^https?://' })),
  DASHBOARD_URL: Type.Optional(Type.String({ format: 'uri', pattern: '^https?://' })),
  SUPPORT_EMAIL: Type.String({ format: 'email', default: 'support@mailroom.example.com' }),
  ALLOWED_SENDERS: Type.Optional(Type.String()),
  ATTACHMENT_FETCH_TIMEOUT_MS: Type.Integer({ minimum: 100, maximum: 120000, default: 10000 }),
  WORKFLOW_BUNDLE_PATH: Type.Optional(Type.String({ minLength: 1 })),
  /** How long the worker keeps retrying MongoDB and Temporal at start before it gives up. */
  WORKER_STARTUP_TIMEOUT_SECONDS: Type.Integer({ minimum: 1, maximum: 86_400, default: 300 }),
  LOG_LEVEL: enumOf(LOG_LEVELS, 'info'),
  LOG_PRETTY: Type.Boolean({ default: false }),
  AUTH_MODE: enumOf(AUTH_MODES, 'api-key'),
  /** Signs run ids derived from Idempotency-Keys (and other server-made tokens). */
  MAILROOM_SECRET: Type.String({ minLength: 32 }),
  SIGNUP_LINK_ORIGINS: Type.Optional(Type.String({ minLength: 1 })),
  CLICK_LINK_LIFETIME_DAYS: Type.Integer({ minimum: 1, maximum: 3650, default: 365 }),
  SCHEDULE_MIN_INTERVAL_SECONDS: Type.Integer({ minimum: 1, maximum: 86_400, default: 60 }),
  /** Scheduled emails not sent yet one company may hold, live and test each (core/email/send/scheduled-pending.ts). */
  SCHEDULED_MAX_PENDING: Type.Integer({ minimum: 1, maximum: 100_000_000, default: 100_000 }),
  /** MiB of stored request those may hold between them; at least one 12 MB request. */
  SCHEDULED_MAX_PENDING_MB: Type.Integer({ minimum: 12, maximum: 100_000_000, default: 1024 }),
  MAX_CONNECTIONS_PER_CLIENT: Type.Integer({ minimum: 1, maximum: 1_000_000, default: 1000 }),
  WORKFLOW_WAITS_PER_COMPANY: Type.Integer({ minimum: 0, maximum: 100_000, default: 50 }),
  SIGNUP_LIMIT_PER_RECIPIENT: Type.Integer({ minimum: 1, maximum: 1_000_000, default: 10 }),
  SIGNUP_LIMIT_PER_IP: Type.Integer({ minimum: 1, maximum: 1_000_000, default: 300 }),
  TRUSTED_PROXIES: Type.String({ default: '' }),
  /** How long the gateway lets one request wait on the database or Temporal before answering 503. */
  REQUEST_DEADLINE_SECONDS: Type.Integer({ minimum: 1, maximum: 600, default: 90 }),
  BODY_TIMEOUT_SECONDS: Type.Integer({ minimum: 1, maximum: 600, default: 20 }),
  /** How long a gateway or worker stopped with SIGTERM lets its requests or steps finish before cutting them (api/graceful-drain.ts, worker/create-worker.ts). */
  SHUTDOWN_GRACE_SECONDS: Type.Integer({ minimum: 1, maximum: 600, default: 40 }),
  /** MiB of key holders' request bodies one gateway holds at once; one company at most half; callers without credentials an eighth more (api/middleware/body-budget.ts). At least two 45 MB sends. */
  BODY_BYTES_IN_FLIGHT_MB: Type.Integer({ minimum: 90, maximum: 1_000_000, default: 128 }),
  SENDGRID_WEBHOOK_ALLOW_UNSIGNED: Type.Boolean({ default: false }),
  EMAIL_PROVIDERS: Type.String({ pattern: '^(sendgrid|smtp)(,(sendgrid|smtp))?$', default: 'sendgrid' }),
  SMTP_URL: Type.Optional(Type.String({ pattern: '^smtps?://', maxLength: 2000 })),
  PROVIDER_BREAKER_COOLDOWN_SECONDS: Type.Integer({ minimum: 1, maximum: 3600, default: 30 }),
  /** Sends per second a provider may be handed, across every replica; unset: unlimited. */
  SENDGRID_MAX_PER_SECOND: Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000 })),
  SMTP_MAX_PER_SECOND: Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000 })),
  DEV_INBOX_DIR: Type.Optional(Type.String({ minLength: 1 })),
  WEBHOOK_TIMEOUT_SECONDS: Type.Integer({ minimum: 1, maximum: 60, default: 10 }),
  WEBHOOK_RETRY_INITIAL_SECONDS: Type.Integer({ minimum: 1, maximum: 3600, default: 5 }),
  WEBHOOK_RETRY_MAX_SECONDS: Type.Integer({ minimum: 1, maximum: 86_400, default: 3600 }),
  WEBHOOK_GIVE_UP_SECONDS: Type.Integer({ minimum: 1, maximum: 604_800, default: 86_400 }),
  WEBHOOK_DISABLE_AFTER_FAILED_ATTEMPTS: Type.Integer({ minimum: 1, maximum: 100_000, default: 100 }),
  WEBHOOK_ALLOWED_ADDRESSES: Type.String({ default: '' }),
  /** Email records older than this are deleted by the worker (core/email/records/pruner.ts); 0 keeps them. */
  EMAIL_RETENTION_DAYS: Type.Integer({ minimum: 0, maximum: 36_500, default: 0 }),
});

export type Env = Static<typeof EnvSchema>;
