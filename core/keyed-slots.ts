/**
 * At most `perKey` slots held at once per key (a client network's open
 * connections, a company's open run waits, a company's render threads): `take` answers how to give the
 * slot back, or undefined when the key has none left. Giving one back twice
 * gives it back once; a key holding none is forgotten.
 */
export type KeyedSlots = ReturnType<typeof createKeyedSlots>;

export function createKeyedSlots(perKey: number) {
  const held = new Map<string, number>();
  return {
    take(key: string): (() => void) | undefined {
      const count = held.get(key) ?? 0;
      if (count >= perKey) return undefined;
      held.set(key, count + 1);
      let given = false;
      return () => {
        if (given) return;
        given = true;
        const left = (held.get(key) ?? 1) - 1;
        if (left > 0) held.set(key, left);
        else held.delete(key);
      };
    },
  };
}
