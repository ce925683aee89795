/**
 * Progress bars and spans of time as every surface writes them: the CLI's text, the editor's views
 * and the webviews. Pure (no node, no host), so the webview bundle can import it.
 */

/** Percent done, rounded; `whenEmpty` when there is nothing to do. */
export function percent(done: number, total: number, whenEmpty = 0): number {
  return total === 0 ? whenEmpty : Math.round((done / total) * 100);
}

/** "▰▰▰▱▱ 3/5": tree rows and epic lists (an empty plan shows an empty bar). */
export function progressBar(done: number, total: number, cells = 5): string {
  const filled = total === 0 ? 0 : Math.round((done / total) * cells);
  return `${'▰'.repeat(filled)}${'▱'.repeat(cells - filled)} ${done}/${total}`;
}

/** "████░░░░░░░░  33%": `show`'s checklist bars (nothing to do counts as done). */
export function percentBar(done: number, total: number, width = 12): string {
  const ratio = total === 0 ? 1 : done / total;
  const filled = Math.round(ratio * width);
  return `${'█'.repeat(filled)}${'░'.repeat(width - filled)} ${String(percent(done, total, 100)).padStart(3)}%`;
}

/** "40s", "12m", "1h45m", "3d": whole units passed (a live view changes its text at unit boundaries). */
export function shortDuration(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m`;
  const h = Math.floor(m / 60);
  if (h >= 48) return `${Math.floor(h / 24)}d`;
  return m % 60 ? `${h}h${String(m % 60).padStart(2, '0')}m` : `${h}h`;
}

/** "5m ago", or "just now" for the last five seconds. */
export function agoText(ms: number): string {
  return ms < 5000 ? 'just now' : `${shortDuration(ms)} ago`;
}

/** "40 s", "6 min", "2 h 5 min", "3 days": a span as a sentence says it (messages, toasts). */
export function humanSpan(ms: number): string {
  const s = Math.round(Math.abs(ms) / 1000);
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min`;
  const h = Math.floor(m / 60);
  if (h < 48) return m % 60 ? `${h} h ${m % 60} min` : `${h} h`;
  return `${Math.floor(h / 24)} days`;
}

/** "12m 05s", "1h 05m", or "expired 45s ago": a countdown that ticks every second (the dashboard's leases). */
export function countdown(ms: number): string {
  const s = Math.round(Math.abs(ms) / 1000);
  const text =
    s < 60
      ? `${s}s`
      : s < 3600
        ? `${Math.floor(s / 60)}m ${String(s % 60).padStart(2, '0')}s`
        : `${Math.floor(s / 3600)}h ${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
  return ms >= 0 ? text : `expired ${text} ago`;
}
