import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/**
 * Mailroom's Prometheus metrics: one registry per process, defined here and
 * recorded into by the code that knows what happened (the send pipeline, the
 * webhook handler, the tracking code, the gateway's middleware and routes).
 * The gateway serves the registry at `GET /metrics` (api/middleware/metrics.ts),
 * the worker beside the Temporal SDK's metrics (worker/telemetry.ts): each
 * process counts what happens in it. docs/metrics.md describes every series.
 *
 * Every label value comes from a bounded set (route templates, template ids
 * the validator accepted, error kinds, known event types, registered workflow
 * names): a caller can never mint a new series by sending odd input.
 */
export const registry = new Registry();

// CPU, memory, event-loop lag, GC and handles of the process (prom-client's standard set).
collectDefaultMetrics({ register: registry });

/** Seconds; from 5 ms (a cached read) to 30 s (the provider's own timeout). */
const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

export const httpRequests = new Counter({
  name: 'mailroom_http_requests_total',
  help: 'HTTP requests answered by the gateway, by method, route template and status.',
  labelNames: ['method', 'route', 'status'] as const,
  registers: [registry],
});

export const httpRequestDuration = new Histogram({
  name: 'mailroom_http_request_duration_seconds',
  help: 'Time from receiving a request to answering it, by method, route template and status.',
  labelNames: ['method', 'route', 'status'] as const,
  buckets: LATENCY_BUCKETS,
  registers: [registry],
});

export const emailsSent = new Counter({
  name: 'mailroom_emails_sent_total',
  help: 'Emails the provider accepted, by template.',
  labelNames: ['template'] as const,
  registers: [registry],
});

export const emailsFailed = new Counter({
  name: 'mailroom_emails_failed_total',
  help: 'Delivery attempts that failed, by template and failure kind (not_configured, provider_rejected, transient).',
  labelNames: ['template', 'kind'] as const,
  registers: [registry],
});

export const providerCallDuration = new Histogram({
  name: 'mailroom_provider_request_duration_seconds',
  help: "Duration of one call to the email provider's send API, by outcome (ok, provider_rejected, transient).",
  labelNames: ['outcome'] as const,
  buckets: LATENCY_BUCKETS,
  registers: [registry],
});

/** SendGrid Event Webhook event types; anything else is counted as `other`. */
export const WEBHOOK_EVENT_TYPES = new Set([
  'processed',
  'deferred',
  'delivered',
  'open',
  'click',
  'bounce',
  'dropped',
  'spamreport',
  'unsubscribe',
  'group_unsubscribe',
  'group_resubscribe',
]);

export const webhookEvents = new Counter({
  name: 'mailroom_webhook_events_total',
  help: 'SendGrid Event Webhook events received, by event type and whether they changed a record (applied) or not (ignored).',
  labelNames: ['type', 'result'] as const,
  registers: [registry],
});

/** The `type` label of a webhook event: its SendGrid name when known, else `other`. */
export const webhookEventType = (type: unknown): string =>
  typeof type === 'string' && WEBHOOK_EVENT_TYPES.has(type) ? type : 'other';

export const workflowTriggers = new Counter({
  name: 'mailroom_workflow_triggers_total',
  help: 'Workflow trigger requests, by workflow name and result (started, already_started, invalid, failed).',
  labelNames: ['workflow', 'result'] as const,
  registers: [registry],
});

export const opensRecorded = new Counter({
  name: 'mailroom_opens_recorded_total',
  help: 'Tracking-pixel opens and tracked-link clicks written to their email record.',
  registers: [registry],
});

export const opensDropped = new Counter({
  name: 'mailroom_opens_dropped_total',
  help: 'Tracking-pixel opens for a well-formed view key, and clicks of valid click links, that were not written (write failed or no room to buffer them).',
  registers: [registry],
});

export const clicksFollowed = new Counter({
  name: 'mailroom_clicks_total',
  help: 'Tracked links followed with a valid token (redirected), by whether the click was buffered for recording (false: the buffer was full).',
  labelNames: ['buffered'] as const,
  registers: [registry],
});

export const emailsSwept = new Counter({
  name: 'mailroom_emails_swept_total',
  help: 'Email records the sweeper failed after they stayed pending too long, by outcome (outcome_unknown: may have been sent; abandoned: never handed to the provider).',
  labelNames: ['outcome'] as const,
  registers: [registry],
});

/** The registry in Prometheus' text format, with its content type. */
export async function exposition(): Promise<{ contentType: string; body: string }> {
  return { contentType: registry.contentType, body: await registry.metrics() };
}

/** Each provider's circuit breaker: 0 closed, 1 half-open (one probe call), 2 open (skipped). */
export const providerBreakerState = new Gauge({
  name: 'mailroom_provider_breaker_state',
  help: "A provider's circuit breaker: 0 closed, 1 half-open, 2 open.",
  labelNames: ['provider'] as const,
  registers: [registry],
});

/** Calls to each provider by outcome: ok, transient, provider_rejected, outcome_unknown, skipped (breaker open). */
export const providerSends = new Counter({
  name: 'mailroom_provider_sends_total',
  help: 'Sends handed to each provider, by outcome (ok, transient, provider_rejected, outcome_unknown, skipped).',
  labelNames: ['provider', 'outcome'] as const,
  registers: [registry],
});

/** A send that went on to the next provider after a transient failure (or an open breaker). */
export const providerFailovers = new Counter({
  name: 'mailroom_provider_failovers_total',
  help: 'Sends passed from one provider to the next after a failure that proves the first did not take them.',
  labelNames: ['from', 'to'] as const,
  registers: [registry],
});

/** Sends that met a provider's maximum rate: `waited` for a slot and went, or `refused` after the wait bound. */
export const providerRateLimited = new Counter({
  name: 'mailroom_provider_rate_limited_total',
  help: "Sends that met a provider's maximum rate (…_MAX_PER_SECOND), by result: waited (then sent on) or refused (waited the bound; failed over, 429, or retried later).",
  labelNames: ['provider', 'result'] as const,
  registers: [registry],
});

/** Sends refused because their company's daily limit was spent. */
export const dailyLimitRefusals = new Counter({
  name: 'mailroom_daily_limit_refusals_total',
  help: "Sends refused with 429 `daily sending limit reached.` because their company's daily limit was spent.",
  registers: [registry],
});
