import { nodeGenerator } from './http-load.ts';
import type { Generator } from './load.ts';
import { ensureSystemPackages, WRK } from '../../infra/system-packages.ts';
import { wrkGenerator } from './wrk.ts';

/**
 * The bench's HTTP load generator: wrk (Debian's package, installed when
 * missing and this process may, like the test run's packages:
 * infra/system-packages.ts). Without it a quick run falls back
 * to the Node generator and says so; a full run stops, since its pixel and
 * click floors would measure the Node generator. `BENCH_GENERATOR=node`
 * chooses the Node generator on purpose (`wrk`: wrk or stop).
 */
export async function chooseGenerator(opts: {
  quick: boolean;
  scratch: string;
  log: (line: string) => void;
}): Promise<Generator> {
  const wanted = process.env['BENCH_GENERATOR'] ?? '';
  if (wanted !== '' && wanted !== 'wrk' && wanted !== 'node')
    throw new Error(`BENCH_GENERATOR must be wrk or node, not ${JSON.stringify(wanted)}`);
  if (wanted === 'node') return nodeGenerator('BENCH_GENERATOR=node');
  const wrk = await findWrk(opts.log);
  if (wrk.path) return wrkGenerator(wrk.path, opts.scratch, wrk.path);
  if (opts.quick && wanted === '')
    return nodeGenerator(
      `${wrk.why}; this quick run falls back to the Node generator (its figures are generator-bound against the bare floors)`,
    );
  throw new Error(
    `${wrk.why}. ${opts.quick ? '' : 'A full run needs it: the Node generator cannot load the bare floors (BENCH_GENERATOR=node runs with it anyway, generator-bound).'}`.trim(),
  );
}

/** wrk's path, or why there is none (the provisioning's one line: what to install and how). */
async function findWrk(log: (line: string) => void): Promise<{ path?: string; why?: string }> {
  try {
    return { path: (await ensureSystemPackages([WRK], { log }))[WRK.name] };
  } catch (err) {
    return { why: err instanceof Error ? err.message : String(err) };
  }
}
