/**
 * `"maxParallelAgents": "auto"` (docs/scheduler.md, "The fleet"): how many agents may run at once,
 * grown by one after each stretch of successful runs on a machine with room, halved when a run meets a
 * usage limit or ends on a pressured machine, between 1 and a ceiling. One limit or one stretch of
 * pressure halves it once, however many runs end in it: runs started together end together. A usage
 * limit is the account's window, not the fleet's size: once it is over (a run succeeds after it), the
 * fleet is back where the limit found it, and a limit met again there halves it again. Pure: the
 * orchestrator feeds it each run's end and each look at the machine, and keeps the state.
 */

export interface AutoParallel {
  readonly current: number;
  readonly ceiling: number;
  /** Successful runs since the last change. */
  readonly streak: number;
  /** What last halved it while that still holds: a limit (until a run succeeds) or pressure (until the machine has room). */
  readonly cutBy: 'limit' | 'pressure' | null;
  /** Where the usage limit now holding found it (null: no limit holds). */
  readonly beforeLimit: number | null;
}

/** Successful runs in a row, with no limit and no pressure, that add one agent. */
export const AUTO_STRETCH = 2;
/** Where auto starts: low, so a fleet finds the machine's and the account's room before it fills them. */
export const AUTO_START = 2;

export function autoStart(ceiling: number): AutoParallel {
  return { current: Math.max(1, Math.min(AUTO_START, ceiling)), ceiling, streak: 0, cutBy: null, beforeLimit: null };
}

/**
 * The state after a run ended with `outcome` (a run's status: succeeded, failed, limited, …) while the
 * machine was `pressured` (admission held new work at the last look). A failure of the agent's own is
 * neither room nor pressure: it only ends the stretch.
 */
export function autoAfterRun(s: AutoParallel, outcome: string, pressured: boolean): AutoParallel {
  const cause = outcome === 'limited' ? 'limit' : pressured ? 'pressure' : null;
  if (cause !== null) return s.cutBy === cause ? { ...s, streak: 0 } : halve(s, cause);
  if (outcome !== 'succeeded') return { ...s, streak: 0 };
  if (s.beforeLimit !== null)
    return { ...s, current: Math.max(s.current, s.beforeLimit), streak: 0, cutBy: null, beforeLimit: null };
  const streak = s.streak + 1;
  if (streak < AUTO_STRETCH) return { ...s, streak, cutBy: null };
  return { ...s, current: Math.min(s.ceiling, s.current + 1), streak: 0, cutBy: null, beforeLimit: null };
}

/** The state after a look at the machine: room again ends the stretch of pressure that halved it. */
export function autoAfterLook(s: AutoParallel, pressured: boolean): AutoParallel {
  return !pressured && s.cutBy === 'pressure' ? { ...s, cutBy: null } : s;
}

function halve(s: AutoParallel, cause: 'limit' | 'pressure'): AutoParallel {
  // Pressure is the machine's: nothing is won back quickly after it.
  const beforeLimit = cause === 'limit' ? s.current : null;
  return { ...s, current: Math.max(1, Math.floor(s.current / 2)), streak: 0, cutBy: cause, beforeLimit };
}

/** How the current value is shown (the orchestrate log, the status bar's tooltip, the dashboard). */
export function autoText(s: AutoParallel): string {
  return `auto: ${s.current} agent${s.current === 1 ? '' : 's'} at once (at most ${s.ceiling})`;
}
