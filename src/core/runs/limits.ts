/**
 * How an agent CLI says it met a usage or rate limit, and when the limit resets (docs/agents.md,
 * "Usage limits"). Pure: the output comes in, the supervisor records what it finds.
 */
import { at, parseAll } from './usage.ts';

/**
 * A limit as a preset's CLI reports it: a JSON event (one per line) with the `match` fields, whose
 * text is at the first of `paths` holding one (and, with `says`, matches it); or, without `match`,
 * a line of output (not a JSON event) that `says` matches (its group named `message`, if any, is the message).
 */
export interface LimitSpec {
  readonly match?: Readonly<Record<string, string | number | boolean>>;
  readonly paths?: readonly string[];
  readonly says?: RegExp;
}

/** A limit met: the CLI's words for it and the reset time they name, if any. */
export interface LimitHit {
  readonly message: string;
  /** When the limit resets, as the message or a retry-after says (ISO 8601); null when it names none. */
  readonly resetAt: string | null;
}

/** Any CLI: an HTTP 429, a rate limit, a quota, a usage limit. */
export const GENERIC_LIMIT =
  /\b429\b|rate[ _-]?limit|too many requests|\bquota\b|usage limit|RESOURCE_EXHAUSTED|insufficient_quota/i;

/**
 * The limit the output reports, or null. The preset's own reports come first; then the generic
 * wording in what the agent said its error was (`headline`) or in its last lines of stderr, never in
 * what it printed while it worked (an agent may well write about rate limits).
 */
export function detectLimit(
  specs: readonly LimitSpec[],
  output: { readonly stdout: string; readonly stderr: string; readonly headline: string | null },
  now: Date,
): LimitHit | null {
  const lines = `${output.stdout}\n${output.stderr}`.split('\n');
  const events = parseAll(lines);
  for (const spec of specs) {
    const text = spec.match ? eventText(spec, events) : lastLine(lines, spec.says);
    if (text) return hit(text, now);
  }
  const errLines = output.stderr
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('{') && !l.startsWith('"'))
    .slice(-5);
  const generic = [output.headline ?? '', ...errLines].find((l) => GENERIC_LIMIT.test(l));
  return generic ? hit(generic, now) : null;
}

function eventText(spec: LimitSpec, events: readonly Record<string, unknown>[]): string | null {
  for (const doc of [...events].reverse()) {
    if (!Object.entries(spec.match ?? {}).every(([k, v]) => at(doc, k) === v)) continue;
    const text = (spec.paths ?? [])
      .map((p) => at(doc, p))
      .find((v): v is string => typeof v === 'string' && v.trim() !== '');
    if (text && (!spec.says || spec.says.test(text))) return text;
    if (!text && !spec.says) return JSON.stringify(spec.match);
  }
  return null;
}

function lastLine(lines: readonly string[], says: RegExp | undefined): string | null {
  if (!says) return null;
  const line = lines.filter((l) => !l.trimStart().startsWith('{') && says.test(l)).at(-1);
  return line === undefined ? null : (says.exec(line)?.groups?.message ?? line);
}

function hit(text: string, now: Date): LimitHit {
  const one = text.trim().split('\n').join(' ');
  return {
    message: one.length > 300 ? `${one.slice(0, 300)}…` : one,
    resetAt: resetOf(one, now)?.toISOString() ?? null,
  };
}

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
const DURATION =
  /(\d+(?:\.\d+)?)\s*(ms|milliseconds?|s|secs?|seconds?|m|mins?|minutes?|h|hrs?|hours?|d|days?)(?![a-z])/gi;

/**
 * The reset time a limit message names: an epoch after `|` (Claude Code's "Claude AI usage limit
 * reached|1760000000"), a wait ("try again in 90 seconds", "retry in 34.5s", "try again in 2 days 3
 * hours", "retry-after: 90"), a date ("try again at Jul 5th, 2026 8:19 PM"), or a clock time ("resets 3pm", "try again at 3:05 PM": this host's
 * local time, the next one to come). Null when it names none.
 */
export function resetOf(text: string, now: Date): Date | null {
  const epoch = /limit reached\|(\d{9,11})\b/i.exec(text);
  if (epoch) return new Date(Number(epoch[1]) * 1000);
  const after =
    /retry[-_]after"?\s*[:=]\s*"?(\d+(?:\.\d+)?)\b/i.exec(text) ?? /retryDelay"?:?\s*"?(\d+(?:\.\d+)?)s/i.exec(text);
  if (after) return new Date(now.getTime() + Number(after[1]) * 1000);
  const wait = /(?:try again|retry|wait|resets?)\s+(?:in|after)\s+((?:\d+(?:\.\d+)?\s*[a-z]+[\s,]*(?:and\s+)?)+)/i.exec(
    text,
  );
  if (wait?.[1]) {
    let ms = 0;
    for (const m of wait[1].matchAll(DURATION)) ms += Number(m[1]) * (UNIT_MS[unitOf(m[2] ?? '')] ?? 0);
    if (ms > 0) return new Date(now.getTime() + Math.ceil(ms));
  }
  // Codex: "try again at Jul 5th, 2026 8:19 PM".
  const dated =
    /(?:try again|resets?)(?:\s+at)?\s+([A-Z][a-z]{2,8}\.? \d{1,2})(?:st|nd|rd|th)?,? (\d{4}),? (\d{1,2}:\d{2}\s*[AP]M)/i.exec(
      text,
    );
  if (dated) {
    const at = Date.parse(`${dated[1]}, ${dated[2]} ${dated[3]}`);
    if (Number.isFinite(at)) return new Date(at);
  }
  const clock = /(?:resets?|try again|available again)(?:\s+at)?\s+(\d{1,2})(?::(\d{2}))?\s*(am|pm)?\b/i.exec(text);
  if (clock && (clock[2] !== undefined || clock[3] !== undefined)) {
    let hour = Number(clock[1]) % 24;
    const ampm = clock[3]?.toLowerCase();
    if (ampm === 'pm' && hour < 12) hour += 12;
    if (ampm === 'am' && hour === 12) hour = 0;
    const at = new Date(now);
    at.setHours(hour, Number(clock[2] ?? 0), 0, 0);
    if (at.getTime() <= now.getTime()) at.setDate(at.getDate() + 1);
    return at;
  }
  return null;
}

function unitOf(word: string): string {
  const w = word.toLowerCase();
  if (w === 'ms' || w.startsWith('milli')) return 'ms';
  return w[0] ?? '';
}

/** The wait when the message names no reset: 60 s, doubling with each limit in a row, at most 30 minutes. */
export function fallbackWaitMs(consecutive: number): number {
  return Math.min(30 * 60_000, 60_000 * 2 ** Math.max(0, consecutive - 1));
}
