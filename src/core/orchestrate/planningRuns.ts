import { pidAlive } from '../runs/processGroup.ts';
import type { RunView, Store } from '../store/index.ts';
import {
  createPlanningWorktree,
  planningEpicOf,
  planningWorktreePath,
  removePlanningWorktree,
  sweepPlanningWorktrees,
} from './planningWorktree.ts';
import { releaseWorktreePorts } from './worktreePorts.ts';
import { messageOf } from '../../shared/errorMessage.ts';
import { roleSpec } from '../../shared/roles.ts';

export interface PlanningRunsOptions {
  readonly store: Store;
  readonly mainRoot: string;
  readonly worktreeLocation: string | undefined;
  readonly log: (line: string) => void;
  /** Sets a new planning worktree up (the config's setup command): the failure, or null. */
  readonly setUp: (epicId: string, worktree: string) => Promise<string | null>;
}

/** A planning run's worktree, as `PlanningRuns.open` made it. */
export interface PlanningRun {
  /** Which of this scheduler's planning runs it is (the worktree's owner). */
  readonly run: number;
  /** The worktree, or null when it could not be made. */
  readonly path: string | null;
  /** Why the run cannot start there (the worktree not made, or its setup failed; then it is removed), or null. */
  readonly failed: string | null;
}

/**
 * The scheduler's planning worktrees (docs/lifecycle.md): a planner works in a worktree of her own,
 * made when her run is launched and removed when it ends; one planner per epic at a time; those a
 * scheduler that stopped left behind are swept once at start.
 */
export class PlanningRuns {
  private readonly store: Store;
  private readonly mainRoot: string;
  private readonly worktreeLocation: string | undefined;
  private readonly log: (line: string) => void;
  private readonly setUp: PlanningRunsOptions['setUp'];
  /**
   * Per epic, which planning run owns the planning worktree now: a run that ended after a newer one
   * took the epic over must not remove the newer one's worktree.
   */
  private readonly owner = new Map<string, number>();
  private runs = 0;
  private swept = false;

  constructor(options: PlanningRunsOptions) {
    this.store = options.store;
    this.mainRoot = options.mainRoot;
    this.worktreeLocation = options.worktreeLocation;
    this.log = options.log;
    this.setUp = options.setUp;
  }

  /** Whether a planning run of the epic is under way (a second would remove the first one's worktree as stale). */
  busy(epicId: string): boolean {
    return this.owner.has(epicId);
  }

  /** Makes and sets up the epic's planning worktree for a new run, which owns it from before the first await. */
  async open(epicId: string, blocked: boolean): Promise<PlanningRun> {
    const run = ++this.runs;
    this.owner.set(epicId, run);
    try {
      const made = await createPlanningWorktree(this.mainRoot, epicId, blocked, this.worktreeLocation);
      this.log(`${epicId}: planning worktree ${made.path} at ${made.base}`);
      const failed = await this.setUp(epicId, made.path);
      if (failed) await this.close(epicId, run);
      return { run, path: made.path, failed };
    } catch (err) {
      this.owner.delete(epicId);
      return { run, path: null, failed: `cannot make the planning worktree: ${messageOf(err)}` };
    }
  }

  /** Removes the epic's planning worktree if planning run `run` still owns it. */
  async close(epicId: string, run: number): Promise<void> {
    if (this.owner.get(epicId) !== run) return;
    this.owner.delete(epicId);
    await this.remove(epicId);
  }

  /** Removes the planning worktrees of planning runs found lost, unless a run of this scheduler owns them now. */
  async removeLost(lost: readonly RunView[]): Promise<void> {
    for (const r of lost) {
      const epicId = planningEpicOf(r.worktree);
      if (roleSpec(r.role)?.worktree === 'planning' && epicId && !this.owner.has(epicId)) await this.remove(epicId);
    }
  }

  /** Once, at start: planning worktrees a scheduler that died left behind, which no live run uses, are removed. */
  async sweepOnce(): Promise<void> {
    if (this.swept) return;
    this.swept = true;
    try {
      const live = (await this.store.runs({ active: true, limit: 1000 })).filter(
        (r) => r.worktree !== null && r.pid !== null && pidAlive(r.pid),
      );
      const s = await sweepPlanningWorktrees(
        this.mainRoot,
        new Set(live.map((r) => r.worktree as string)),
        pidAlive,
        this.worktreeLocation,
      );
      for (const p of s.removed)
        this.log(`removed the planning worktree ${p}: left by a scheduler that stopped, no live run uses it`);
      for (const p of s.refused) this.log(`left ${p} alone: it is a symbolic link, not a planning worktree`);
    } catch (err) {
      this.log(`could not sweep leftover planning worktrees: ${messageOf(err)}`);
    }
  }

  /** Removes an epic's planning worktree; a failure is logged (the next planning run makes a fresh one). */
  private async remove(epicId: string): Promise<void> {
    try {
      if (await removePlanningWorktree(this.mainRoot, epicId, this.worktreeLocation)) {
        await releaseWorktreePorts(
          this.store,
          planningWorktreePath(this.mainRoot, epicId, this.worktreeLocation),
          process.env,
        );
        this.log(`${epicId}: planning worktree removed`);
      }
    } catch (err) {
      this.log(`${epicId}: could not remove the planning worktree: ${messageOf(err)}`);
    }
  }
}
