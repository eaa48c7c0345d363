import { spawn } from 'node:child_process';
import { ensureTemporalCli } from './provision.ts';

/**
 * `npm run temporal -- <args>`: the official Temporal CLI, the one `npm run
 * dev` provisioned (installed on first use when none is on PATH), pointed at
 * the dev server unless TEMPORAL_ADDRESS says otherwise, e.g.
 * `npm run temporal -- workflow list --query 'CompanyId = "…"'` or
 * `npm run temporal -- workflow reset --workflow-id <runId> --type FirstWorkflowTask --reason "…"`.
 * The CLI reads TEMPORAL_ADDRESS and TEMPORAL_NAMESPACE itself.
 */
const binary = await ensureTemporalCli((line) => process.stderr.write(`[temporal] ${line}\n`));
const env = {
  ...process.env,
  TEMPORAL_ADDRESS:
    process.env['TEMPORAL_ADDRESS'] || `127.0.0.1:${process.env['DEV_TEMPORAL_PORT'] || 7233}`,
};
const child = spawn(binary, process.argv.slice(2), { stdio: 'inherit', env });
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
