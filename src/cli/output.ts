/** What a command produced: one JSON document for --json, and text for people. */
export interface CommandOutput {
  readonly json: unknown;
  readonly text: string;
  /** Exit code when the command succeeded in a way that still needs attention (default 0). */
  readonly exitCode?: number;
  /** Lines for stderr (prefixed 'springfield: warning: '), printed in text and --json mode alike. */
  readonly warnings?: readonly string[];
}

export function output(json: unknown, text: string, exitCode = 0, warnings: readonly string[] = []): CommandOutput {
  return { json, text, exitCode, warnings };
}

/** A 12-cell bar like the Tugstate seed's: `████░░░░░░░░  33%`. */
export function bar(done: number, total: number, width = 12): string {
  const ratio = total === 0 ? 1 : done / total;
  const filled = Math.round(ratio * width);
  return `${'█'.repeat(filled)}${'░'.repeat(width - filled)} ${String(Math.round(ratio * 100)).padStart(3)}%`;
}

/** "1h 45m", "12m", "40s" until `iso` from `now`, or "expired 3m ago". */
export function until(iso: string, now: Date): string {
  const ms = Date.parse(iso) - now.getTime();
  const text = duration(Math.abs(ms));
  return ms >= 0 ? `expires in ${text}` : `expired ${text} ago`;
}

export function duration(ms: number): string {
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m`;
  const h = Math.floor(m / 60);
  return m % 60 ? `${h}h ${m % 60}m` : `${h}h`;
}
