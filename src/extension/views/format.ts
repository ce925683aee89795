/** Small text helpers shared by the views; no vscode. */

/** "▰▰▰▱▱ 3/5" */
export function progressBar(done: number, total: number, cells = 5): string {
  const filled = total === 0 ? 0 : Math.round((done / total) * cells);
  return `${'▰'.repeat(filled)}${'▱'.repeat(cells - filled)} ${done}/${total}`;
}

/** "1h45m", "12m", "40s" from milliseconds. */
export function shortDuration(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m`;
  const h = Math.floor(m / 60);
  return m % 60 ? `${h}h${String(m % 60).padStart(2, '0')}m` : `${h}h`;
}

/** "1h45m left" or "expired 3m ago". */
export function leaseLeft(expiresAt: string, now: Date): string {
  const ms = Date.parse(expiresAt) - now.getTime();
  return ms >= 0 ? `${shortDuration(ms)} left` : `expired ${shortDuration(-ms)} ago`;
}

export function baseName(path: string): string {
  const parts = path.split(/[\\/]/).filter(Boolean);
  return parts.at(-1) ?? path;
}

export const STATUS_WORDS: Readonly<Record<string, string>> = {
  planned: 'planned', ready: 'ready', in_progress: 'in progress', implemented: 'implemented', verified: 'verified',
  done: 'done', deferred: 'deferred', blocked: 'blocked', pending: 'pending', claimed: 'claimed', completed: 'completed',
};

export const SIGNAL_WORDS: Readonly<Record<string, string>> = {
  pass: 'pass', implementation_failure: 'implementation failure', option_viability_failure: 'option viability', adr_invalidated: 'ADR invalidated',
};

/** Escapes text for a Markdown tooltip. */
export function md(text: string): string {
  return text.replace(/([\\`*_{}[\]()#+\-.!|<>])/g, '\\$1');
}
