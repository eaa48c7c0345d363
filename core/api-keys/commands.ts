import { parseArgs } from 'node:util';
import { CommandUsageError } from '../command-line.ts';
import { isUuid, SCOPES, type Scope } from '../identity.ts';
import type { ApiKey, KeyStore } from './key-store.ts';

/**
 * The operator's key commands (`npm run keys -- …`, infra/keys-cli.ts), apart
 * from process concerns so tests run them against a real store:
 *
 *   create --company <uuid> [--organization <uuid>] --name <text> --scopes <list|all> [--test]
 *   list [--company <uuid>]
 *   revoke <id>
 *
 * Returns the lines to print; throws UsageError for a wrong command line
 * (printed with the usage), and a plain Error for a right one that cannot be
 * done (one line: `revoke` of an id with no live key).
 */
export class UsageError extends CommandUsageError {
  constructor(message: string) {
    super(message, USAGE);
  }
}

export const USAGE = [
  'usage: npm run keys -- create --company <uuid> [--organization <uuid>] --name <text> --scopes <list|all> [--test]',
  '       npm run keys -- list [--company <uuid>]',
  '       npm run keys -- revoke <id>',
  '       npm run keys -- quota --company <uuid> [--daily <n>|none]',
  '       npm run keys -- senders --company <uuid> [--allow <domain|address>,…|none]',
  `scopes: ${SCOPES.join(', ')}`,
].join('\n');

export async function runKeyCommand(store: KeyStore, argv: readonly string[]): Promise<string[]> {
  const { values, positionals } = parseArgs({
    args: [...argv],
    allowPositionals: true,
    options: {
      company: { type: 'string' },
      organization: { type: 'string' },
      name: { type: 'string' },
      scopes: { type: 'string' },
      test: { type: 'boolean' },
    },
  }).valueOf() as { values: Record<string, string | boolean | undefined>; positionals: string[] };
  const [command, ...rest] = positionals;
  switch (command) {
    case 'create':
      return create(store, values);
    case 'list':
      return list(store, values['company'] as string | undefined);
    case 'revoke': {
      const id = rest[0];
      if (!id) throw new UsageError('revoke needs the key id (see `list`)');
      // The command line was right: the key is unknown or revoked already, so no usage after it.
      if (!(await store.revoke(id))) throw new Error(`no live key with id ${id}`);
      return [`revoked ${id}: requests with it are refused within seconds`];
    }
    default:
      throw new UsageError(command ? `unknown command: ${command}` : 'no command given');
  }
}

async function create(
  store: KeyStore,
  values: Record<string, string | boolean | undefined>,
): Promise<string[]> {
  const { company, organization, name, scopes } = values as Record<string, string | undefined>;
  const test = values['test'] === true;
  if (!company || !isUuid(company)) throw new UsageError('--company must be the company UUID');
  if (organization !== undefined && !isUuid(organization))
    throw new UsageError('--organization must be a UUID');
  if (!name?.trim() || name.length > 200) throw new UsageError('--name must be 1–200 characters');
  const { key, plaintext } = await store.create({
    companyId: company.toLowerCase(),
    organizationId: organization?.toLowerCase() ?? null,
    name: name.trim(),
    scopes: parseScopes(scopes),
    test,
  });
  return [
    `created ${test ? 'test-mode ' : ''}key ${key.id} "${key.name}" for company ${key.companyId}` +
      (key.organizationId ? `, organization ${key.organizationId}` : '') +
      ` with scopes ${key.scopes.join(', ')}`,
    'the key (shown once, only its hash is stored; send it as `Authorization: Bearer <key>`):',
    plaintext,
  ];
}

function parseScopes(value: string | undefined): Scope[] {
  if (!value) throw new UsageError(`--scopes is required: a comma list of ${SCOPES.join(', ')}, or all`);
  if (value.trim() === 'all') return [...SCOPES];
  const scopes = value.split(',').map((s) => s.trim());
  const unknown = scopes.filter((s) => !(SCOPES as readonly string[]).includes(s));
  if (unknown.length)
    throw new UsageError(`unknown scope(s): ${unknown.join(', ')}; known: ${SCOPES.join(', ')}`);
  return scopes as Scope[];
}

async function list(store: KeyStore, company: string | undefined): Promise<string[]> {
  if (company !== undefined && !isUuid(company)) throw new UsageError('--company must be a UUID');
  const keys = await store.list(company?.toLowerCase());
  if (!keys.length) return ['no keys'];
  return keys.map(describeKey);
}

const describeKey = (key: ApiKey): string =>
  [
    key.id,
    key.revokedAt ? 'revoked' : 'active',
    `company=${key.companyId}`,
    `organization=${key.organizationId ?? '-'}`,
    `name=${JSON.stringify(key.name)}`,
    `scopes=${key.scopes.join(',')}`,
    `created=${key.createdAt.toISOString()}`,
    `last_used=${key.lastUsedAt?.toISOString() ?? 'never'}`,
    `mode=${key.test ? 'test' : 'live'}`,
  ].join('  ');
