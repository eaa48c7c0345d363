/**
 * The README's tour, run the way a newcomer runs it: a fresh `npm run dev`
 * (its own Temporal, FerretDB, mail sink, worker and gateway, on free ports,
 * with its own data directory), then every bash block of the tour pasted in
 * order into one bash session, so shell variables carry ids from block to
 * block. Each command whose answer the README shows (`# 202 {…}` under it) must
 * answer that status and a body matching it (`…` matches anything).
 *
 * Only the addresses differ from the README: `localhost:3000` is replaced by
 * the free port this platform got, and the tour's shell has DEV_MONGO_PORT.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { freePort, startProcess, type Spawned } from '../infra/processes.ts';

const ROOT = dirname(dirname(fileURLToPath(import.meta.url)));

interface Step {
  /** The lines pasted, comments included. */
  script: string;
  /** What the README shows under the command, if anything. */
  expected?: { status: number; body: string };
}

/** The tour's bash blocks, cut into steps: each ends at a `# <status> <body>` line (or the block's end). */
export function tourSteps(readme: string): Step[] {
  const start = readme.indexOf('\n## A tour');
  const end = readme.indexOf('\n## ', start + 1);
  const tour = readme.slice(start, end);
  const steps: Step[] = [];
  for (const [, block] of tour.matchAll(/```bash\n([\s\S]*?)```/g)) {
    let lines: string[] = [];
    for (const line of block!.split('\n')) {
      const shown = /^# (\d{3}) (.*)$/.exec(line);
      if (shown) {
        steps.push({ script: lines.join('\n'), expected: { status: Number(shown[1]), body: shown[2]! } });
        lines = [];
      } else if (line.trim()) {
        lines.push(line);
      }
    }
    if (lines.length) steps.push({ script: lines.join('\n') });
  }
  return steps;
}

/** `…` matches anything; everything else literally; the whole output. */
function pattern(shown: string): RegExp {
  const parts = shown.split('…').map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  return new RegExp(`^${parts.join('.*?')}$`, 's');
}

/**
 * A poll: GET of a run without `wait`, which a client repeats until the
 * status is final. A GET with `wait` must answer right the first time.
 */
const isPoll = (script: string) =>
  /^curl -s "localhost:\d+\/api\/workflow\/[^"]*\?runId=/m.test(script) && !script.includes('&wait=');

let scratch: string;
let dev: Spawned;
let devOutput = '';
let readyAt = 0;
let bash: ChildProcessWithoutNullStreams;
let nextLine: () => Promise<string>;
const ports = { api: 0, temporal: 0, temporalUi: 0, mongo: 0 };

before(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'mailroom-readme-'));
  // The tour runs "from the repository root": .data/ here is the platform's, and node finds mongodb.
  await symlink(join(ROOT, 'node_modules'), join(scratch, 'node_modules'));
  ports.api = await freePort();
  ports.temporal = await freePort();
  ports.temporalUi = await freePort();
  ports.mongo = await freePort();
  // A platform of its own, as `npm run dev` starts it on a fresh clone; a shell without Mailroom's settings.
  const clean: NodeJS.ProcessEnv = { ...process.env };
  for (const name of ['TEMPORAL_ADDRESS', 'MONGODB_URI', 'SENDGRID_API_KEY', 'MAILROOM_SECRET', 'AUTH_MODE'])
    delete clean[name];
  const env: NodeJS.ProcessEnv = { ...clean };
  Object.assign(env, {
    PORT: String(ports.api),
    DEV_TEMPORAL_PORT: String(ports.temporal),
    DEV_TEMPORAL_UI_PORT: String(ports.temporalUi),
    DEV_MONGO_PORT: String(ports.mongo),
    DEV_DATA_DIR: join(scratch, '.data'),
    NO_COLOR: '1',
  });
  let ready!: () => void;
  const isReady = new Promise<void>((resolve) => (ready = resolve));
  dev = await startProcess(
    'npm run dev',
    process.execPath,
    ['--import', 'tsx', join(ROOT, 'infra', 'dev.ts')],
    {
      cwd: ROOT,
      env,
      logFile: join(scratch, 'dev.log'),
      onLine: (line) => {
        devOutput += `${line}\n`;
        if (/^\[dev\]\s+ready in /.test(line)) {
          readyAt = Date.now();
          ready();
        }
      },
    },
  );
  const exited = dev.exited.then(({ code }) => {
    throw new Error(`npm run dev exited (code ${code}) before ready:\n${devOutput.slice(-4000)}`);
  });
  await Promise.race([isReady, exited]);

  // The tour's shell knows where the platform's MongoDB is, as a user who moved it exports DEV_MONGO_PORT.
  bash = spawn('bash', ['--noprofile', '--norc'], {
    cwd: scratch,
    env: { ...clean, DEV_MONGO_PORT: String(ports.mongo), TERM: 'dumb' },
  });
  const lines = createInterface({ input: bash.stdout });
  const queue: string[] = [];
  const waiting: Array<(line: string) => void> = [];
  lines.on('line', (line) => {
    const waiter = waiting.shift();
    if (waiter) waiter(line);
    else queue.push(line);
  });
  bash.stderr.on('data', (chunk: Buffer) => (devOutput += `[bash stderr] ${chunk.toString()}`));
  nextLine = () =>
    queue.length ? Promise.resolve(queue.shift()!) : new Promise((resolve) => waiting.push(resolve));
  // The README's curl, plus a record of each answer's status (the README shows it; curl -s does not).
  await writeFile(
    join(scratch, 'wrap.sh'),
    [
      `__status=${scratch}/status; __body=${scratch}/body`,
      'curl() { local code rc; code=$(command curl -o "$__body" -w "%{http_code}" "$@"); rc=$?; echo "$code" >> "$__status"; cat "$__body"; return $rc; }',
      '',
    ].join('\n'),
  );
  await run(`. ${scratch}/wrap.sh`);
});

after(async () => {
  bash?.stdin.end();
  bash?.kill();
  await dev?.stop(20_000);
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

let stepCount = 0;
/** Pastes `script` into the session; resolves with everything it printed and its exit code. */
async function run(script: string): Promise<{ output: string; code: number }> {
  const marker = `__step_${++stepCount}_done__`;
  bash.stdin.write(`: > ${scratch}/status\n{\n${script}\n} 2>&1; echo "${marker} $?"\n`);
  const output: string[] = [];
  for (;;) {
    const line = await nextLine();
    const end = new RegExp(`^(.*)${marker} (\\d+)$`).exec(line);
    if (end) {
      if (end[1]) output.push(end[1]);
      return { output: output.join('\n').trim(), code: Number(end[2]) };
    }
    output.push(line);
  }
}

async function lastStatus(): Promise<number> {
  const statuses = (await readFile(join(scratch, 'status'), 'utf8')).trim().split('\n');
  return Number(statuses[statuses.length - 1]);
}

describe('README tour', () => {
  it('npm run dev names where it keeps its data: DEV_DATA_DIR when set', () => {
    const data = join(scratch, '.data');
    for (const where of [join(data, 'temporal.db'), `${join(data, 'mongo')}/`, `${join(data, 'mail')}/`])
      assert.ok(devOutput.includes(where), `${where} in:\n${devOutput.slice(0, 3000)}`);
  });

  it('finds the tour and the answers it shows', async () => {
    const steps = tourSteps(await readFile(join(ROOT, 'README.md'), 'utf8'));
    assert.ok(steps.filter((s) => s.expected).length >= 10, 'the tour shows its answers');
  });

  it('runs every block in order as pasted, each command answering what the README shows', async () => {
    const readme = (await readFile(join(ROOT, 'README.md'), 'utf8')).replaceAll(
      'localhost:3000',
      `localhost:${ports.api}`,
    );
    for (const step of tourSteps(readme)) {
      const deadline = Date.now() + (isPoll(step.script) ? 60_000 : 0);
      for (;;) {
        const { output, code } = await run(step.script);
        const where = `\n--- step ---\n${step.script}\n--- printed ---\n${output}`;
        if (!step.expected) {
          assert.equal(code, 0, `exit code${where}`);
          break;
        }
        const status = await lastStatus();
        const matches = status === step.expected.status && pattern(step.expected.body).test(output);
        if (!matches && Date.now() < deadline) {
          await new Promise((r) => setTimeout(r, 1000));
          continue;
        }
        assert.equal(status, step.expected.status, `HTTP status${where}`);
        assert.match(output, pattern(step.expected.body), `answer${where}`);
        assert.equal(code, 0, `exit code${where}`);
        break;
      }
    }
  });

  it('a worker that dies is started again by npm run dev, and runs go on', async () => {
    // This platform's worker: the one whose environment names this test's data folder.
    const { stdout } = await promisify(execFile)('pgrep', ['-f', 'worker/worker.ts']).catch(() => ({
      stdout: '',
    }));
    const ours = [];
    for (const pid of stdout.split('\n').filter(Boolean)) {
      const environ = await readFile(`/proc/${pid}/environ`, 'utf8').catch(() => '');
      if (environ.includes(join(scratch, '.data'))) ours.push(Number(pid));
    }
    assert.equal(ours.length, 1, `one worker of this platform: ${stdout}`);
    // A worker that dies at once has a cause to fix and is left stopped: this one has run a while.
    await new Promise((r) => setTimeout(r, Math.max(0, readyAt + 12_000 - Date.now())));
    process.kill(ours[0]!, 'SIGKILL');
    const deadline = Date.now() + 60_000;
    while (!/\[worker\].*starting it again/.test(devOutput) && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 200));
    assert.match(devOutput, /\[worker\].*starting it again/);
    const ids = { userId: randomUUID(), companyId: randomUUID(), organizationId: randomUUID() };
    const headers = {
      'content-type': 'application/json',
      'x-user-id': ids.userId,
      'x-company-id': ids.companyId,
      'x-organization-id': ids.organizationId,
    };
    const base = `http://localhost:${ports.api}/api/workflow/send-email-received-ein`;
    const started = await fetch(base, {
      method: 'POST',
      headers,
      body: JSON.stringify({
        ...ids,
        emailAction: 'ein-received',
        recipients: ['after-restart@example.com'],
      }),
    });
    assert.equal(started.status, 202);
    const { runId } = (await started.json()) as { runId: string };
    let status = '';
    while (status !== 'completed' && Date.now() < deadline) {
      const res = await fetch(`${base}?runId=${runId}&wait=10`, { headers });
      status = ((await res.json()) as { status: string }).status;
    }
    assert.equal(status, 'completed');
  });

  it('a FerretDB that dies is started again by npm run dev on the same data, and sends go on', async () => {
    const { stdout } = await promisify(execFile)('pgrep', [
      '-f',
      `mailroom-ferretdb.* -data ${join(scratch, '.data', 'mongo')}`,
    ]).catch(() => ({ stdout: '' }));
    const pids = stdout.split('\n').filter(Boolean).map(Number);
    assert.equal(pids.length, 1, `one FerretDB of this platform: ${stdout}`);
    process.kill(pids[0]!, 'SIGKILL');
    const deadline = Date.now() + 60_000;
    while (!/\[mongo\].*is back on the same port and data/.test(devOutput) && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 200));
    assert.match(devOutput, /\[mongo\].*exited \(code null, signal SIGKILL\); starting it again/);
    assert.match(devOutput, /\[mongo\].*is back on the same port and data/);
    const headers = {
      'content-type': 'application/json',
      'x-user-id': randomUUID(),
      'x-company-id': randomUUID(),
      'x-organization-id': randomUUID(),
    };
    let status = 0;
    while (status !== 200 && Date.now() < deadline) {
      const res = await fetch(`http://localhost:${ports.api}/api/email/send`, {
        method: 'POST',
        headers,
        body: JSON.stringify({
          to: 'after-db@example.com',
          subject: 'Back',
          template_id: 'custom',
          html_body: '<p>x</p>',
        }),
      });
      status = res.status;
      if (status !== 200) await new Promise((r) => setTimeout(r, 500));
    }
    assert.equal(status, 200, 'a send after the database came back');
  });
});
