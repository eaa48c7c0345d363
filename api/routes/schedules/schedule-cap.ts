import type { Config } from '../../../core/config.ts';
import { createKeyedLock, type KeyedLock } from '../../../core/keyed-lock.ts';

/**
 * The cap on a company's schedules of one workflow, as one gateway keeps it.
 * The schedules are counted in Temporal's visibility, which lists a new
 * schedule only a moment after its create: counted alone, 40 creates at once
 * all saw room (90 → 130 against a cap of 100). So creates of one company
 * and workflow take turns on this gateway, and a schedule this gateway made
 * counts from its create, whether visibility lists it yet or not, until
 * visibility surely does (`LISTED_WITHIN_MS`). Creates racing through
 * different gateways may still pass the cap by what visibility has not
 * listed yet: a few.
 */
export interface ScheduleCap {
  /**
   * Runs `create` when the company holds fewer than `cap` (counting `listed`
   * and this gateway's recent creates), answering the id it made; else 'too-many'.
   */
  admit(
    owner: string,
    cap: number,
    listed: () => Promise<string[]>,
    create: () => Promise<string>,
  ): Promise<string | 'too-many'>;
  /** A schedule deleted through this gateway no longer counts. */
  forget(owner: string, scheduleId: string): void;
}

/** Long enough for visibility to list a schedule after its create (it takes well under a second). */
const LISTED_WITHIN_MS = 60_000;

function createScheduleCap(now = Date.now): ScheduleCap {
  const lock: KeyedLock = createKeyedLock();
  /** Per owner: the schedules made here lately, with when. */
  const recent = new Map<string, Map<string, number>>();
  const recentOf = (owner: string): Map<string, number> => {
    const made = recent.get(owner) ?? new Map<string, number>();
    for (const [id, at] of made) if (now() - at > LISTED_WITHIN_MS) made.delete(id);
    if (made.size === 0) recent.delete(owner);
    return made;
  };
  return {
    admit: (owner, cap, listed, create) =>
      lock.run(owner, async () => {
        const held = new Set(await listed());
        for (const id of recentOf(owner).keys()) held.add(id);
        if (held.size >= cap) return 'too-many';
        const id = await create();
        recent.set(owner, recentOf(owner).set(id, now()));
        return id;
      }),
    forget(owner, scheduleId) {
      recent.get(owner)?.delete(scheduleId);
    },
  };
}

/** One cap per gateway app (its configuration is the app's own object), as for the run waits. */
const capsByApp = new WeakMap<Config, ScheduleCap>();
export function scheduleCap(config: Config): ScheduleCap {
  let cap = capsByApp.get(config);
  if (!cap) capsByApp.set(config, (cap = createScheduleCap()));
  return cap;
}

/** Whose cap a schedule counts in: the company's, per workflow (test and live together). */
export const capOwner = (companyId: string, workflowType: string): string => `${companyId}/${workflowType}`;
