/**
 * The scheduler's decision function (SPEC §7): snapshot, configuration and time in, actions out.
 * Pure and deterministic: no database, no I/O, no clock; the same input gives the same list.
 */
import { hasCommand, intentFor } from './rules.ts';
import type { Action, EpicSnapshot, RunSnapshot, SchedulerConfig, SchedulerSnapshot } from './types.ts';

/** Epics by priority (P0 first), then id; plain code-unit order so no locale can change it. */
export function scheduleOrder(epics: readonly EpicSnapshot[]): EpicSnapshot[] {
  return [...epics].sort((a, b) => compare(a.priority, b.priority) || compare(a.id, b.id));
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** True when the run has been going for longer than the timeout at `now` (an unreadable start never times out). */
export function isTimedOut(run: RunSnapshot, config: SchedulerConfig, now: Date): boolean {
  const started = Date.parse(run.startedAt);
  return Number.isFinite(started) && now.getTime() - started > config.runTimeoutMs;
}

/**
 * The actions for this tick: stop_run for each timed-out run (by id), then at most one action per
 * epic in priority order. Agent runs, and epic starts when Ralph has a command, take free slots.
 */
export function decide(snapshot: SchedulerSnapshot, config: SchedulerConfig, now: Date): Action[] {
  const actions: Action[] = [];
  const busy = new Set<string>();
  let live = 0;
  for (const run of [...snapshot.runs].sort((a, b) => a.id - b.id)) {
    if (run.epicId !== null) busy.add(run.epicId);
    if (isTimedOut(run, config, now)) {
      actions.push({ kind: 'stop_run', runId: run.id, reason: timeoutReason(run, config) });
    } else {
      live += 1;
    }
  }
  const limit = Number.isNaN(config.maxParallelAgents) ? 0 : Math.floor(config.maxParallelAgents);
  let free = Math.max(0, limit - live);
  const seen = new Set<string>();
  for (const epic of scheduleOrder(snapshot.epics)) {
    if (seen.has(epic.id)) continue;
    seen.add(epic.id);
    // One agent per epic: its worktree is shared, so nothing else starts while a run (even one being
    // stopped) or its verification is under way there.
    if (busy.has(epic.id) || epic.verification.running) continue;
    const action = intentFor(epic, config);
    if (action === null) continue;
    const needsSlot = action.kind === 'run' || (action.kind === 'start_epic' && hasCommand(config, 'ralph'));
    if (needsSlot) {
      if (free <= 0) continue;
      free -= 1;
    }
    actions.push(action);
  }
  return actions;
}

function timeoutReason(run: RunSnapshot, config: SchedulerConfig): string {
  const minutes = Math.round(config.runTimeoutMs / 60_000);
  const limit = minutes >= 1 ? `${minutes} min` : `${Math.round(config.runTimeoutMs / 1000)} s`;
  return `${run.role} run ${run.id}${run.epicId ? ` for ${run.epicId}` : ''} outlived its timeout of ${limit}`;
}
