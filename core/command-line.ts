import { parseArgs } from 'node:util';

/**
 * What the operator commands (`npm run keys`, `npm run emails`: each a
 * module of its own, run by infra/operator-command.ts) share about their
 * command lines.
 */

/** A wrong command line: why, and the command's usage, printed after it. */
export class CommandUsageError extends Error {
  constructor(
    message: string,
    readonly usage: string,
  ) {
    super(message);
    this.name = 'CommandUsageError';
  }
}

/**
 * The `--<name> <value>` options of `argv`, each of `names` at most once and
 * nothing else; anything else is a CommandUsageError with `usage`.
 */
export function stringOptions<K extends string>(
  argv: readonly string[],
  names: readonly K[],
  usage: string,
): Partial<Record<K, string>> {
  try {
    const options = Object.fromEntries(names.map((name) => [name, { type: 'string' as const }]));
    return parseArgs({ args: [...argv], options }).values as Partial<Record<K, string>>;
  } catch (err) {
    throw new CommandUsageError((err as Error).message, usage);
  }
}
