import type { BenchEnv } from '../env.ts';
import { freePort } from '../../infra/processes.ts';
import { waitForHttp } from './processes.ts';

/** A floor server in its own process on a free port, up (any answer to `/` counts), and how to stop it. */
export async function startFloor(
  env: BenchEnv,
  name: string,
  script: string,
  vars: NodeJS.ProcessEnv = {},
): Promise<{ pid: number; url: string; stop(): Promise<void> }> {
  const port = await freePort();
  const proc = await env.start(name, script, { ...vars, PORT: String(port) });
  const url = `http://127.0.0.1:${port}`;
  await waitForHttp(proc, `${url}/`, 60_000, { anyStatus: true });
  return { pid: proc.pid, url, stop: () => proc.stop(5000).then(() => undefined) };
}
