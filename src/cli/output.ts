import { shortDuration } from '../shared/format.ts';

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

/** "expires in 1h45m" until `iso` from `now`, or "expired 3m ago". */
export function until(iso: string, now: Date): string {
  const ms = Date.parse(iso) - now.getTime();
  const text = duration(Math.abs(ms));
  return ms >= 0 ? `expires in ${text}` : `expired ${text} ago`;
}

/** "40s", "12m", "1h45m": a one-off message rounds to the nearest second (a 2 h lease just taken reads "2h"). */
export function duration(ms: number): string {
  return shortDuration(Math.round(ms / 1000) * 1000);
}
