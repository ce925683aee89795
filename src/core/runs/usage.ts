/**
 * Where an agent CLI's output reports token usage and cost, as data, and one reader for all of
 * them; `springfield run` reads its agent's output with it and stores the figures with the run.
 */
export type UsageSpec =
  | {
      /** One JSON document per line (`jsonl`) or one document for the whole output (`json`). */
      readonly format: 'jsonl' | 'json';
      /** Top-level fields an event must have to count (`{}`: the whole document). */
      readonly match: Readonly<Record<string, string>>;
      /** Dotted paths inside the event (or inside each entry of `perModel`). */
      readonly costUsd?: string;
      readonly inputTokens?: string;
      readonly outputTokens?: string;
      readonly cacheReadTokens?: string;
      readonly cacheWriteTokens?: string;
      readonly premiumRequests?: string;
      /** An object of per-model entries to add up (Gemini's `stats.models`). */
      readonly perModel?: string;
      /** Add up every matching event (per-turn reports) instead of taking the last one. */
      readonly sum?: boolean;
    }
  | {
      readonly format: 'text';
      /** A regular expression over the output; the last match counts. */
      readonly pattern: string;
      readonly costUsdGroup: number;
    };

export interface Usage {
  costUsd: number | null;
  inputTokens: number | null;
  outputTokens: number | null;
  cacheReadTokens: number | null;
  cacheWriteTokens: number | null;
  premiumRequests: number | null;
}

const FIELDS = [
  'costUsd',
  'inputTokens',
  'outputTokens',
  'cacheReadTokens',
  'cacheWriteTokens',
  'premiumRequests',
] as const;

/** The usage reported in `output`, or null when it reports none (a crash before the final event, say). */
export function readUsage(spec: UsageSpec, output: string): Usage | null {
  if (spec.format === 'text') {
    const matches = [...output.matchAll(new RegExp(spec.pattern, 'g'))];
    const last = matches.at(-1)?.[spec.costUsdGroup];
    return last === undefined ? null : { ...empty(), costUsd: Number(last) };
  }
  const docs =
    spec.format === 'json'
      ? parseAll([output.slice(output.indexOf('{'), output.lastIndexOf('}') + 1)])
      : parseAll(output.split('\n'));
  const events = docs.filter((d) => Object.entries(spec.match).every(([k, v]) => d[k] === v));
  if (events.length === 0) return null;
  const counted = spec.sum ? events : events.slice(-1);
  const entries = counted.flatMap((e) => {
    if (!spec.perModel) return [e];
    const models = at(e, spec.perModel);
    return models && typeof models === 'object' ? Object.values(models as Record<string, unknown>) : [];
  });
  const total = empty();
  for (const entry of entries) {
    for (const field of FIELDS) {
      const path = spec[field];
      const value = path ? at(entry, path) : undefined;
      if (typeof value === 'number') total[field] = (total[field] ?? 0) + value;
    }
  }
  return total;
}

function empty(): Usage {
  return {
    costUsd: null,
    inputTokens: null,
    outputTokens: null,
    cacheReadTokens: null,
    cacheWriteTokens: null,
    premiumRequests: null,
  };
}

/** Every chunk that is one JSON object (one per line in a JSONL stream); the others are skipped. */
export function parseAll(chunks: readonly string[]): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const chunk of chunks) {
    const text = chunk.trim();
    if (!text.startsWith('{')) continue;
    try {
      const value: unknown = JSON.parse(text);
      if (value && typeof value === 'object' && !Array.isArray(value)) out.push(value as Record<string, unknown>);
    } catch {
      // a line of progress text, not an event
    }
  }
  return out;
}

/** The value at a dotted path (`error.data.message`) inside a JSON value, or undefined. */
export function at(value: unknown, path: string): unknown {
  let current = value;
  for (const key of path.split('.')) {
    if (!current || typeof current !== 'object') return undefined;
    current = (current as Record<string, unknown>)[key];
  }
  return current;
}
