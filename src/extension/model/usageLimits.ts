/**
 * Usage limits as the editor shows them (docs/agents.md, "Usage limits"): the status bar's line and
 * tooltip, and what each epic card says while the epic waits on one. Pure: no vscode.
 */
import { clock, type EpicRow, type RoleLimit, UNDER_WAY, type Waiting } from '../../core/index.ts';
import { ROLE_NAMES } from '../views/viewText.ts';

/** "claude" → "Claude". */
export function presetName(preset: string): string {
  return preset.charAt(0).toUpperCase() + preset.slice(1);
}

export interface LimitStatus {
  /** "Claude limited until 14:05" (and "+1" when more presets are limited). */
  readonly text: string;
  /** One line per role: who is limited until when, and the preset it runs on meanwhile. */
  readonly tooltip: string;
  /** The earliest reset: the line changes then. */
  readonly until: string;
  /** Whether some role has no preset left to run on. */
  readonly stopped: boolean;
}

/** The status bar's line while a preset the configured roles use is limited; null while none is. */
export function limitStatus(limits: readonly RoleLimit[], now: Date): LimitStatus | null {
  const live = limits.filter((l) => Date.parse(l.until) > now.getTime());
  if (live.length === 0) return null;
  const byPreset = new Map<string, string>();
  for (const l of [...live].sort((a, b) => a.until.localeCompare(b.until)))
    if (!byPreset.has(l.preset)) byPreset.set(l.preset, l.until);
  const [[preset, until]] = [...byPreset] as [[string, string]];
  const more = byPreset.size > 1 ? ` +${byPreset.size - 1}` : '';
  const lines = live.map((l) => {
    const who = ROLE_NAMES[l.role] ?? l.role;
    const what = `${l.preset} limited until ${clock(l.until, now)}`;
    return l.runs_on ? `${who}: ${what}; runs on ${l.runs_on} meanwhile` : `${who}: ${what}; no fallback free, waits`;
  });
  return {
    text: `${presetName(preset)} limited until ${clock(until, now)}${more}`,
    tooltip: lines.join('\n'),
    until,
    stopped: live.some((l) => l.runs_on === null),
  };
}

/**
 * Per epic waiting on a usage limit, what its card says ("waiting: claude limited until 14:05 (Lisa)").
 * While the scheduler runs here its last pass says which epics wait; otherwise an epic under way
 * waits when a role has no preset left that is not limited (as `epic show` says).
 */
export function epicLimitWaits(
  epics: readonly EpicRow[],
  waiting: readonly Waiting[] | undefined,
  limits: readonly RoleLimit[],
  now: Date,
): Map<string, string> {
  const out = new Map<string, string>();
  if (waiting) {
    for (const w of waiting)
      if (w.kind === 'limit')
        out.set(w.epic_id, out.has(w.epic_id) ? `${out.get(w.epic_id)}; ${w.message}` : w.message);
    return out;
  }
  const stopped = limits.filter((l) => l.runs_on === null && Date.parse(l.until) > now.getTime());
  if (stopped.length === 0) return out;
  const text = stopped.map((l) => `${l.message} (${ROLE_NAMES[l.role] ?? l.role})`).join('; ');
  for (const e of epics) if (UNDER_WAY.includes(e.status)) out.set(e.id, text);
  return out;
}
