import { RefusedError } from '../../errors.ts';
import type { NewRun, ProgressMarks, RunEnd, RunView } from '../runTypes.ts';
import { type Outcome, processOutcome, progressOutcome, spendsIteration } from '../shared/runOutcome.ts';
import type { Actor } from '../types.ts';
import { countIteration, getEpic } from './interim.ts';
import { releaseClaim, reopenCompleted } from '../shared/claims.ts';
import { runPg } from './port.ts';
import { writeEvent } from './rows.ts';
import { getRun, recordRunUsage, runView, selectRuns, type PgRunRow } from './runs.ts';
import type { Tx } from './session.ts';

const SCHEDULER: Actor = { worktree: 'springfield-scheduler', agent: 'scheduler' };

/** Inserts a `running` row of this host and its event; the row id is the run id. */
export async function startRun(tx: Tx, run: NewRun, actor: Actor | null): Promise<RunView> {
  const id = Number((await tx.q<{ id: number }>(`INSERT INTO runs (repo_id, epic_id, plan_path, step_anchor, role, iteration, host, worktree, agent_id, command, pid, status, started_at, claim_token, head_before, launch_id)
    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, 'running', $12, $13, $14, $15) RETURNING id`,
  [tx.repo, run.epicId, run.planPath, run.stepAnchor, run.role, run.iteration, tx.host, run.worktree, run.agentId, JSON.stringify(run.command), run.pid, tx.now,
    run.claimToken ?? null, run.headBefore ?? null, run.launchId ?? null]))[0]?.id);
  await writeEvent(tx, actor, {
    entity: 'run', action: 'start', epicId: run.epicId, planPath: run.planPath, stepAnchor: run.stepAnchor, to: 'running',
    data: { run_id: id, role: run.role, iteration: run.iteration, command: run.command, pid: run.pid },
  });
  return runView(await getRun(tx, id));
}

/** Records the agent's own process group, so a lost run's agent can be ended too. */
export async function setAgentPid(tx: Tx, runId: number, pid: number): Promise<void> {
  await tx.q('UPDATE runs SET agent_pid = $3 WHERE repo_id = $1 AND id = $2', [tx.repo, runId, pid]);
}

/** The counters a run's progress is judged by, taken at its start and again at its end. */
export async function progressMarks(tx: Tx, epicId: string, planPath: string | null, stepAnchor: string | null): Promise<ProgressMarks> {
  const row = (await tx.q<{ proposals: number; signals: number; items: number }>(`SELECT
      (SELECT count(*) FROM plan_versions WHERE repo_id = $1 AND epic_id = $2)::int AS proposals,
      (SELECT count(*) FROM signals WHERE repo_id = $1 AND epic_id = $2)::int AS signals,
      (SELECT count(*) FROM checklist_items i WHERE i.repo_id = $1 AND i.plan_path = $3 AND i.status = 'completed'
        AND i.step_anchor IN (SELECT anchor FROM steps WHERE repo_id = $1 AND plan_path = $3 AND (anchor = $4 OR parent_anchor = $4)))::int AS items`,
  [tx.repo, epicId, planPath, stepAnchor]))[0];
  return { proposals: row?.proposals ?? 0, signals: row?.signals ?? 0, itemsDone: planPath && stepAnchor ? row?.items ?? 0 : 0 };
}

/**
 * Ends a run with its outcome and what follows from it in the same transaction, as on SQLite: a step
 * the run still holds is released at once, a non-success counts one build iteration for Ralph and
 * Bart. The run's row is locked first, so two finishers (or a finisher and markOrphans) queue; finishing twice changes nothing.
 */
export async function finishRun(tx: Tx, runId: number, end: RunEnd, actor: Actor | null): Promise<RunView> {
  const row = await getRun(tx, runId, true);
  if (row.status !== 'running' && row.status !== 'lost') return recordRunUsage(tx, runView(row), end.usage ?? null);
  const { status, reason } = await outcomeOf(tx, row, end);
  const changed = await tx.q(`UPDATE runs SET status = $3, ended_at = $4, exit_code = $5, outcome_reason = $6, output_tail = $7, head_after = $8
    WHERE repo_id = $1 AND id = $2 AND status = $9 RETURNING id`, [tx.repo, runId, status, tx.now, end.exitCode, reason, end.outputTail ?? '', end.headAfter ?? null, row.status]);
  if (changed.length !== 1) throw new RefusedError('run_changed', `run ${runId} changed while being finished; try again`);
  await writeEvent(tx, actor, {
    entity: 'run', action: 'finish', epicId: row.epic_id, planPath: row.plan_path, stepAnchor: row.step_anchor, from: row.status, to: status,
    reason, data: { run_id: runId, exit_code: end.exitCode, signal: end.signal, outcome: status },
  });
  const ended = await getRun(tx, runId);
  if (end.reopenStep && row.plan_path && row.step_anchor && row.claim_token !== null) {
    const [plan, anchor, token] = [row.plan_path, row.step_anchor, row.claim_token];
    await runPg(tx, (port) => reopenCompleted(port, plan, anchor, token, actor ?? SCHEDULER, `run ${runId}: ${reason ?? status}`));
  }
  // A row marked lost was settled then (released, counted); a late finish only corrects its outcome.
  if (row.status === 'running') await afterEnd(tx, ended, actor ?? SCHEDULER);
  return recordRunUsage(tx, runView(ended), end.usage ?? null);
}

/** Releases what an ended run still holds (fenced by its host, worktree and token), and counts a non-success against the build budget. */
async function afterEnd(tx: Tx, run: PgRunRow, actor: Actor): Promise<void> {
  if (run.plan_path && run.step_anchor && run.worktree && run.claim_token !== null) {
    const why = run.status === 'succeeded' ? `run ${run.id} ended with ${run.step_anchor} unfinished; released for the next session` : `run ${run.id} ${run.status}: ${run.outcome_reason ?? ''}`.trim();
    const [plan, anchor, holder] = [run.plan_path, run.step_anchor, { host: run.host, worktree: run.worktree, token: run.claim_token }];
    await runPg(tx, (port) => releaseClaim(port, plan, anchor, holder, actor, why));
  }
  if (!run.epic_id || !spendsIteration(run.role, run.status)) return;
  const epic = await getEpic(tx, run.epic_id);
  if (epic.status === 'in_progress' || epic.status === 'implemented') await countIteration(tx, epic.id, actor, `${run.role} run ${run.id} ${run.status}`);
}

/** The outcome and its reason, from how the process ended and what it changed. */
async function outcomeOf(tx: Tx, run: RunView, end: RunEnd): Promise<Outcome> {
  const ended = processOutcome(end);
  if (ended) return ended;
  if (!end.marks || !run.epic_id) return { status: 'succeeded', reason: null };
  const completed = run.role === 'ralph' && run.plan_path !== null && run.step_anchor !== null
    && (await tx.q<{ status: string }>('SELECT status FROM steps WHERE repo_id = $1 AND plan_path = $2 AND anchor = $3', [tx.repo, run.plan_path, run.step_anchor]))[0]?.status === 'completed';
  const committed = end.headAfter != null && run.head_before != null && end.headAfter !== run.head_before;
  return progressOutcome(run.role, run.step_anchor, end.marks, await progressMarks(tx, run.epic_id, run.plan_path, run.step_anchor), { completed, committed });
}

/**
 * This host's running rows whose supervising pid is gone (docs/postgres.md, "Per-host facts"): a pid
 * names a process only on the host that started it, so other hosts' runs are never judged here.
 */
export async function findOrphans(tx: Tx, isAlive: (pid: number) => boolean): Promise<RunView[]> {
  const running = await selectRuns(tx, `status = 'running' AND host = $2 AND pid IS NOT NULL`, [tx.host], 'ORDER BY id');
  return running.filter((run) => run.pid !== null && !isAlive(run.pid)).map(runView);
}

/**
 * Marks this host's `running` rows whose supervising pid is gone as `lost` and releases their steps at
 * once (fenced by the token they held); a lost Ralph or Bart run counts against the build budget.
 */
export async function markOrphans(tx: Tx, isAlive: (pid: number) => boolean, actor: Actor | null): Promise<RunView[]> {
  const lost: RunView[] = [];
  for (const run of await findOrphans(tx, isAlive)) {
    const reason = `supervising process ${run.pid} is gone`;
    const changed = await tx.q(`UPDATE runs SET status = 'lost', ended_at = $3, outcome_reason = $4 WHERE repo_id = $1 AND id = $2 AND status = 'running' AND host = $5 RETURNING id`,
      [tx.repo, run.id, tx.now, reason, tx.host]);
    if (changed.length !== 1) continue;
    await writeEvent(tx, actor, {
      entity: 'run', action: 'lost', epicId: run.epic_id, planPath: run.plan_path, stepAnchor: run.step_anchor, from: 'running', to: 'lost',
      reason, data: { run_id: run.id, pid: run.pid },
    });
    const ended = await getRun(tx, run.id);
    await afterEnd(tx, ended, actor ?? SCHEDULER);
    lost.push(runView(ended));
  }
  return lost;
}
