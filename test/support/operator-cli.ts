import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * An operator command (`npm run keys`, `npm run emails`: infra/<script>) as
 * the operator runs it: a process of its own on the database `mongodbUri`
 * names. Its exit code, and what it printed (stdout, or stderr on failure).
 */
export async function operatorCommand(
  script: string,
  mongodbUri: string,
  args: readonly string[],
): Promise<{ code: number; out: string }> {
  try {
    const { stdout } = await run('npx', ['tsx', `infra/${script}`, ...args], {
      env: { ...process.env, MONGODB_URI: mongodbUri },
    });
    return { code: 0, out: stdout };
  } catch (err) {
    const e = err as { code: number; stderr: string };
    return { code: e.code, out: e.stderr };
  }
}
