/**
 * Reads a Prometheus text exposition the way a scraper does: one sample per
 * `name{label="value",...} number` line (comments skipped), so tests assert on
 * series and their values rather than on the text's layout.
 */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

const SAMPLE_LINE = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+\d+)?$/;
const LABEL = /(?<!\w)([a-zA-Z_]\w*)="((?:[^"\\]|\\.)*)"/g;

export function parseExposition(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const match = SAMPLE_LINE.exec(line);
    if (!match) throw new Error(`not a Prometheus sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const [, key, raw] of (match[2] ?? '').matchAll(LABEL))
      labels[key!] = raw!.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
    samples.push({ name: match[1]!, labels, value: Number(match[3]) });
  }
  return samples;
}

/** A scrape: every sample, and the value of one series (0 when it does not exist yet). */
export class Scrape {
  constructor(readonly samples: Sample[]) {}

  static async of(
    url: string,
    headers: Record<string, string> = {},
  ): Promise<Scrape & { contentType: string }> {
    const res = await fetch(url, { headers });
    if (res.status !== 200) throw new Error(`GET ${url} answered ${res.status}`);
    const scrape = new Scrape(parseExposition(await res.text()));
    return Object.assign(scrape, { contentType: res.headers.get('content-type') ?? '' });
  }

  /** The series' value; labels not given are summed over. */
  value(name: string, labels: Record<string, string> = {}): number {
    return this.samples
      .filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
      .reduce((sum, s) => sum + s.value, 0);
  }

  has(name: string): boolean {
    return this.samples.some((s) => s.name === name);
  }
}
