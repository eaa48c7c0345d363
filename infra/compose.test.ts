import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { EnvSchema } from '../core/config-env.ts';

/**
 * docker-compose.yml is well-formed where no container engine runs: Debian's
 * `docker-compose` resolves it (`docker-compose config`), and the resolved
 * stack is what infra/prometheus.yml scrapes. The environment is a clean one
 * and `.env` is ignored, so a developer's settings cannot change the answer.
 */
const ROOT = dirname(dirname(fileURLToPath(import.meta.url)));
const SECRET = 'compose-test-secret-0123456789abcdef';

interface Service {
  command?: string[] | string;
  depends_on?: Record<string, { condition: string }>;
  environment?: Record<string, string | number>;
  expose?: string[];
  ports?: string[];
  profiles?: string[];
  stop_grace_period?: string;
  volumes?: Array<string | { source?: string; target?: string }>;
}

function compose(args: string[], env: Record<string, string> = { MAILROOM_SECRET: SECRET }) {
  const scratch = mkdtempSync(join(tmpdir(), 'mailroom-compose-'));
  const envFile = join(scratch, 'empty.env');
  writeFileSync(envFile, '');
  try {
    const run = spawnSync('docker-compose', ['--env-file', envFile, '-f', 'docker-compose.yml', ...args], {
      cwd: ROOT,
      env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', HOME: scratch, ...env },
      encoding: 'utf8',
    });
    if ((run.error as NodeJS.ErrnoException | undefined)?.code === 'ENOENT')
      throw new Error(
        "docker-compose is not installed: npm test installs Debian's package as root; otherwise `sudo apt-get install -y --no-install-recommends docker-compose`",
      );
    if (run.error) throw run.error;
    return run;
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

function resolved(profile = 'monitoring'): Record<string, Service> {
  const run = compose(['--profile', profile, 'config']);
  assert.equal(run.status, 0, run.stderr);
  return (parse(run.stdout) as { services: Record<string, Service> }).services;
}

describe('docker-compose.yml', () => {
  it('validates with `docker-compose config`, with and without the monitoring and scale profiles', () => {
    for (const args of [
      ['config', '-q'],
      ['--profile', 'monitoring', 'config', '-q'],
      ['--profile', 'scale', 'config', '-q'],
    ]) {
      const run = compose(args);
      assert.equal(run.status, 0, `docker-compose ${args.join(' ')}: ${run.stderr}`);
      // A shell variable written `$name` instead of `$$name` resolves to nothing, with only a warning.
      assert.doesNotMatch(run.stderr, /variable is not set/, `docker-compose ${args.join(' ')}`);
    }
  });

  it('passes every setting of the gateway and the worker on from the shell or .env', () => {
    // Set per service by the file (metrics listeners) or meaningful under npm run dev only.
    const notPassed = new Set(['METRICS_PORT', 'WORKER_METRICS_ADDRESS', 'DEV_INBOX_DIR', 'LOG_PRETTY']);
    const settings = Object.keys(EnvSchema.properties).filter((name) => !notPassed.has(name));
    const example = readFileSync(join(ROOT, '.env.example'), 'utf8');
    for (const name of Object.keys(EnvSchema.properties))
      assert.match(example, new RegExp(`^# ${name}=|^${name}=`, 'm'), `.env.example documents ${name}`);
    const given = Object.fromEntries(
      ['EMAIL_RETENTION_DAYS', 'SMTP_URL', 'WEBHOOK_ALLOWED_ADDRESSES'].map((name, i) => [
        name,
        `value-${i}`,
      ]),
    );
    const run = compose(['config'], { MAILROOM_SECRET: SECRET, ...given });
    assert.equal(run.status, 0, run.stderr);
    const services = (parse(run.stdout) as { services: Record<string, Service> }).services;
    for (const service of ['api', 'worker']) {
      const environment = services[service]!.environment ?? {};
      const missing = settings.filter((name) => !(name in environment));
      assert.deepEqual(missing, [], `${service} is given every setting`);
      for (const [name, value] of Object.entries(given))
        assert.equal(environment[name], value, `${service} ${name}`);
    }
  });

  it('creates the search attributes the runs need, each by its name', () => {
    const command = [resolved('default')['temporal-namespace']!.command].flat().join('\n');
    assert.match(command, /for name in CompanyId UserId EmailAction EmailId; do/);
    // `config` prints the file's `$$` escapes as they are: the container's shell sees `$name`.
    assert.match(command, /grep -qw "\$\$name"/);
    assert.match(command, /--name "\$\$name" --type Keyword/);
  });

  it('refuses to resolve without MAILROOM_SECRET, naming it', () => {
    const run = compose(['config', '-q'], {});
    assert.notEqual(run.status, 0);
    assert.match(run.stderr, /set MAILROOM_SECRET to 32\+ random characters/);
  });

  it('Prometheus scrapes the ports the gateway, the worker and Temporal serve metrics on', () => {
    const services = resolved();
    const prometheus = services['prometheus'];
    assert.ok(prometheus, 'a prometheus service');
    assert.deepEqual(prometheus.profiles, ['monitoring'], 'only with --profile monitoring');
    const mounted = (prometheus.volumes ?? []).map((v) =>
      typeof v === 'string' ? v : `${v.source}:${v.target}`,
    );
    assert.ok(
      mounted.some((v) =>
        v.startsWith(`${join(ROOT, 'infra/prometheus.yml')}:/etc/prometheus/prometheus.yml`),
      ),
      `infra/prometheus.yml is mounted (${mounted.join(', ')})`,
    );

    const scrape = parse(readFileSync(join(ROOT, 'infra/prometheus.yml'), 'utf8')) as {
      scrape_configs: Array<{
        job_name: string;
        static_configs?: Array<{ targets: string[] }>;
        dns_sd_configs?: Array<{ names: string[]; port: number }>;
      }>;
    };
    const targets = scrape.scrape_configs.flatMap((job) => [
      ...(job.static_configs ?? []).flatMap((c) => c.targets),
      ...(job.dns_sd_configs ?? []).flatMap((c) => c.names.map((n) => `${n}:${c.port}`)),
    ]);

    const api = services['api']!;
    const apiPort = String(api.environment?.['METRICS_PORT']);
    assert.notEqual(
      apiPort,
      String(api.environment?.['PORT']),
      'the gateway serves /metrics off its public port',
    );
    assert.ok(api.expose?.includes(apiPort), 'the gateway exposes its metrics port to the network');
    assert.ok(!(api.ports ?? []).some((p) => String(p).includes(apiPort)), 'and does not publish it');
    const worker = services['worker']!;
    const workerPort = String(worker.environment?.['WORKER_METRICS_ADDRESS']).split(':').pop()!;
    assert.equal(String(worker.environment?.['WORKER_METRICS_ADDRESS']), `0.0.0.0:${workerPort}`);
    assert.ok(worker.expose?.includes(workerPort));
    const temporalPort = String(services['temporal']!.environment?.['PROMETHEUS_ENDPOINT']).split(':').pop()!;

    assert.deepEqual(
      targets.sort(),
      [`api:${apiPort}`, `temporal:${temporalPort}`, `worker:${workerPort}`].sort(),
    );
  });

  it('gives every gateway and worker longer than SHUTDOWN_GRACE_SECONDS to drain before a kill', () => {
    // Docker kills 10 s after SIGTERM unless told otherwise: a send waiting on the provider (30 s) would be cut.
    const grace = EnvSchema.properties.SHUTDOWN_GRACE_SECONDS.default;
    const services = Object.entries(resolved('scale')).filter(([name]) =>
      /^(api|worker|scale-api-\d+|scale-worker-\d+)$/.test(name),
    );
    assert.equal(services.length, 6, services.map(([name]) => name).join(', '));
    for (const [name, s] of services) {
      const seconds = /^(\d+)s$/.exec(s.stop_grace_period ?? '')?.[1];
      assert.ok(Number(seconds) > grace, `${name} stop_grace_period ${s.stop_grace_period} > ${grace}s`);
    }
  });

  it('the scale profile: two gateways behind the proxy, two workers on one queue, a replica set', () => {
    const services = resolved('scale');
    const scale = Object.entries(services).filter(([, s]) => s.profiles?.includes('scale'));
    const named = (prefix: string) => scale.filter(([name]) => name.startsWith(prefix));
    const gateways = named('scale-api-');
    const workers = named('scale-worker-');
    const members = named('mongo-').filter(([name]) => name !== 'mongo-init');
    assert.equal(gateways.length, 2, 'two gateways');
    assert.equal(workers.length, 2, 'two workers');
    assert.equal(members.length, 3, 'three replica set members');
    for (const [name, s] of members)
      assert.deepEqual(s.command, ['mongod', '--replSet', 'rs0', '--bind_ip_all'], name);

    // Every gateway and worker uses the replica set (all members) and the same Temporal queue.
    const uri = `mongodb://${members.map(([name]) => `${name}:27017`).join(',')}/mailroom?replicaSet=rs0`;
    for (const [name, s] of [...gateways, ...workers]) {
      assert.equal(s.environment?.['MONGODB_URI'], uri, name);
      assert.equal(
        s.environment?.['TEMPORAL_TASK_QUEUE'],
        services['worker']!.environment?.['TEMPORAL_TASK_QUEUE'],
      );
      assert.equal(s.depends_on?.['mongo-init']?.condition, 'service_completed_successfully', name);
    }
    const init = services['mongo-init']!;
    assert.deepEqual(Object.keys(init.depends_on ?? {}).sort(), members.map(([name]) => name).sort());
    for (const [name] of members) assert.ok(String(init.command).includes(`host: '${name}:27017'`), name);

    // The proxy balances over exactly those gateways on their port, and is the public address.
    const proxy = services['scale-proxy']!;
    const conf = readFileSync(join(ROOT, 'infra/nginx-scale.conf'), 'utf8');
    const upstreams = conf
      .split('\n')
      .map((line) => /^ *server ([\w-]+):(\d+)/.exec(line))
      .flatMap((m) => (m ? [`${m[1]}:${m[2]}`] : []));
    assert.deepEqual(
      upstreams.sort(),
      gateways.map(([name, s]) => `${name}:${s.environment?.['PORT']}`).sort(),
    );
    const published = (proxy.ports ?? []).map((p) => JSON.stringify(p));
    assert.ok(
      published.some((p) => p.includes('8080')),
      `the proxy is published on 8080 (${published.join(', ')})`,
    );
    for (const [name, s] of gateways) {
      assert.equal(
        s.environment?.['PUBLIC_BASE_URL'],
        'http://localhost:8080',
        `${name} links through the proxy`,
      );
      assert.equal((s.ports ?? []).length, 0, `${name} is reached only through the proxy`);
    }
    assert.deepEqual(
      Object.keys(proxy.depends_on ?? {}).sort(),
      [...gateways, ...workers].map(([n]) => n).sort(),
    );
  });
});
