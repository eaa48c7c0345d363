import type { RuntimeOptions } from '@temporalio/worker';
import type { Config } from '../core/config.ts';

/**
 * The Temporal SDK's own metrics (workflow and activity task latencies, poll
 * results, slots, sticky cache, request failures...) served by the SDK's
 * Prometheus exporter at `http://<WORKER_METRICS_ADDRESS>/metrics`. Unset:
 * no exporter (the default outside docker compose, so two local workers never
 * fight over a port). Names and units are the SDK's defaults (`temporal_`
 * prefix, durations in milliseconds), which Temporal's published Grafana
 * dashboards expect.
 */
export function telemetryOptions(
  config: Pick<Config, 'workerMetricsAddress'>,
): RuntimeOptions['telemetryOptions'] {
  if (config.workerMetricsAddress === undefined) return undefined;
  return { metrics: { prometheus: { bindAddress: config.workerMetricsAddress } } };
}
