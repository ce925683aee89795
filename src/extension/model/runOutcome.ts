/**
 * The one line an agent's terminal keeps after its run (docs/editor-scheduler.md): outcome, exit
 * code, duration and what changed in the store and the worktree. No vscode here: tested in plain Node.
 */
import { commitsBetween, type RunView } from '../../core/index.ts';
import { SIGNAL_WORDS, shortDuration, statusWord, stepName } from '../views/viewText.ts';
import type { Snapshot } from './snapshot.ts';
import { roleSpec } from '../../shared/roles.ts';

export interface RunOutcome {
  readonly ok: boolean;
  readonly text: string;
}

/** What the worktree's history says about the run: commits between its start and end heads. */
export interface RunCommits {
  readonly count: number;
  readonly head: string | null;
}

/**
 * The outcome of the run `run` (as the store has it after the run ended), or of a launch that never
 * recorded one (`run` undefined: `springfield run` itself refused or could not start).
 */
export function runOutcome(
  s: Snapshot | undefined,
  run: RunView | undefined,
  exitCode: number,
  elapsedMs: number,
  commits: RunCommits | null,
): RunOutcome {
  if (!run)
    return {
      ok: false,
      text: `springfield run exited ${exitCode} before recording the run (its message is above) · ${shortDuration(elapsedMs)}`,
    };
  const ok = run.status === 'succeeded';
  const took = run.ended_at ? Date.parse(run.ended_at) - Date.parse(run.started_at) : elapsedMs;
  const exit = run.exit_code !== null ? `exit ${run.exit_code}` : `exit ${exitCode}`;
  // Rounded to the second, as `springfield run`'s own last line says it.
  const seconds = Math.round((Number.isFinite(took) ? took : elapsedMs) / 1000);
  const parts = [statusWord(run.status), exit, shortDuration(seconds * 1000), ...changes(s, run, commits)];
  const reason = !ok && run.outcome_reason && run.outcome_reason !== exit ? ` — ${oneLine(run.outcome_reason)}` : '';
  return { ok, text: `${parts.join(' · ')}${reason}` };
}

function changes(s: Snapshot | undefined, run: RunView, commits: RunCommits | null): string[] {
  const out: string[] = [];
  if (run.plan_path && run.step_anchor) {
    const step = s?.plans
      .find((p) => p.plan_path === run.plan_path)
      ?.steps.flatMap((st) => [st, ...st.substeps])
      .find((st) => st.anchor === run.step_anchor);
    if (step)
      out.push(
        `${stepName(step.number)} ${step.status === 'pending' ? 'released (pending)' : statusWord(step.status)}`,
      );
  }
  // What the run's rule expects of it (src/shared/roles.ts): a plan proposed, a signal recorded, commits.
  const spec = roleSpec(run.role);
  if (spec?.rule === 'planning' && run.epic_id) {
    const proposed = s?.awaitingApproval.get(run.epic_id);
    out.push(
      proposed && proposed.created_at >= run.started_at
        ? `plan version ${proposed.version} proposed, waiting for approval`
        : 'no plan proposed',
    );
  }
  if (spec?.rule === 'reviewing' && run.epic_id) {
    const signal = s?.signals.filter((x) => x.epic_id === run.epic_id && x.created_at >= run.started_at).at(-1);
    out.push(signal ? `signal: ${SIGNAL_WORDS[signal.type] ?? signal.type}` : 'no signal recorded');
  }
  // A builder's commits are the point of his run; a planner or reviewer commits nothing unless something is off.
  if (commits && (commits.count > 0 || (spec?.rule === 'building' && spec.kind === 'agent'))) {
    out.push(
      commits.count === 0
        ? 'no commits'
        : `${commits.count} commit${commits.count === 1 ? '' : 's'}${commits.head ? ` (${commits.head.slice(0, 7)})` : ''}`,
    );
  }
  return out;
}

function oneLine(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > 160 ? `${line.slice(0, 157)}…` : line;
}

/** Commits from `before` to `after` in the worktree; null when git cannot tell (a head gone, no git). */
export async function countCommits(cwd: string, before: string, after: string): Promise<RunCommits | null> {
  if (before === after) return { count: 0, head: after };
  const count = await commitsBetween(cwd, before, after, process.env);
  return count === null ? null : { count, head: after };
}
