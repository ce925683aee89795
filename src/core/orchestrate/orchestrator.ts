import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { countIteration, getEpic, setEpicWorktree } from '../epics/epicStore.ts';
import { finishEpic } from '../epics/planApproval.ts';
import { ROLE_NAMES, type Role } from '../epics/transitions.ts';
import { SpringfieldError } from '../errors.ts';
import { loadPlanSource } from '../plan/source.ts';
import { isEditorVariable } from '../runs/agentEnv.ts';
import { markOrphans, pidAlive } from '../runs/recordRun.ts';
import type { RunConfig } from '../runs/roles.ts';
import { decide } from '../scheduler/decide.ts';
import type { Action, RunSnapshot, SchedulerConfig } from '../scheduler/types.ts';
import { recordVerification } from '../store/runs.ts';
import type { SqliteStore } from '../store/sqliteStore.ts';
import type { Actor } from '../store/types.ts';
import { depositApprovedPlan } from './depositPlan.ts';
import { schedulerGit } from './git.ts';
import type { LaunchedAgent, Launcher } from './launcher.ts';
import { openPullRequest, rebaseOntoMain, squashMerge } from './merge.ts';
import { schedulerSnapshot } from './snapshot.ts';
import { summaryFileName, writeSummary } from './summary.ts';
import { runVerification, SlotPool } from './verify.ts';
import { ensureEpicWorktree, removeEpicWorktree } from './worktrees.ts';

export interface OrchestratorOptions {
  readonly store: SqliteStore;
  readonly mainRoot: string;
  readonly config: RunConfig;
  /** argv prefix that runs the springfield CLI, e.g. [process.execPath, '/path/dist/cli.cjs']. */
  readonly cli: readonly string[];
  readonly launcher: Launcher;
  readonly log: (line: string) => void;
  readonly worktreeLocation?: string;
  readonly sameFailureLimit?: number;
}

/**
 * Runs the scheduler: reads a snapshot, asks the pure decide() what to do, and does it — start
 * epics in their worktrees, claim and launch agents through `springfield run`, verify, complete
 * mechanically, merge. The store stays the truth; this object only remembers its own children.
 */
export class Orchestrator {
  private readonly o: OrchestratorOptions;
  private readonly agents = new Map<number, LaunchedAgent>();
  /** Our launches, counted as running until they end (their run row appears only once `springfield run` starts). */
  private readonly inFlight = new Map<number, RunSnapshot>();
  private nextLocalId = -1;
  private readonly pending = new Set<Promise<unknown>>();
  private readonly pool: SlotPool;
  private readonly surfaced = new Set<string>();
  private readonly actor: Actor = { worktree: 'springfield-scheduler', agent: 'scheduler' };

  constructor(options: OrchestratorOptions) {
    this.o = options;
    this.pool = new SlotPool(Math.max(1, Math.floor(availableParallelism() / 2)));
  }

  private get schedulerConfig(): SchedulerConfig {
    const c = this.o.config;
    return { maxParallelAgents: c.maxParallelAgents, runTimeoutMs: c.runTimeoutSeconds * 1000, sameFailureLimit: this.o.sameFailureLimit ?? 3, roles: c.roles as SchedulerConfig['roles'], verificationConfigured: c.verification.length > 0 };
  }

  /** One scheduling pass; returns the actions it took (a failed action is logged, not returned). */
  async tick(): Promise<Action[]> {
    // A run whose `springfield run` process died (kill -9, crash, reboot) is marked lost; its lease then expires.
    const lost = await this.o.store.write((db, now) => markOrphans(db, pidAlive, now, this.actor));
    for (const r of lost) this.o.log(`run #${r.id} (${r.role} ${r.epic_id ?? ''} ${r.step_anchor ?? ''}) is gone; marked lost — its step is reclaimable when the lease expires`);
    const stored = await this.o.store.read((db, now) => schedulerSnapshot(db, now));
    const recorded = new Set(stored.runs.map((r) => `${r.epicId}|${r.role}`));
    const ours = [...this.inFlight.values()].filter((r) => !recorded.has(`${r.epicId}|${r.role}`));
    const snapshot = { ...stored, runs: [...stored.runs, ...ours] };
    const actions = decide(snapshot, this.schedulerConfig, new Date());
    const taken: Action[] = [];
    for (const action of actions) {
      try {
        await this.execute(action);
        taken.push(action);
      } catch (err) {
        const message = err instanceof SpringfieldError ? err.message : err instanceof Error ? err.message : String(err);
        const key = `${action.kind}:${'epicId' in action ? action.epicId : ''}:${message}`;
        // The same failure every pass is reported once; the loop treats it as nothing to do.
        if (!this.surfaced.has(key)) this.o.log(`${action.kind} ${'epicId' in action ? action.epicId : ''} failed: ${message}`);
        this.surfaced.add(key);
      }
    }
    return taken;
  }

  /** Waits until every agent this orchestrator launched has ended. */
  async settle(): Promise<void> {
    while (this.pending.size > 0) await Promise.race(this.pending);
  }

  /** A promise that resolves when any launched agent ends (for --watch). */
  nextExit(): Promise<unknown> {
    return this.pending.size > 0 ? Promise.race(this.pending) : new Promise(() => undefined);
  }

  /** Agents this orchestrator started that have not ended yet. */
  get activeAgents(): number {
    return this.inFlight.size;
  }

  stopAll(): void {
    for (const a of this.agents.values()) a.kill();
  }

  private async execute(a: Action): Promise<void> {
    switch (a.kind) {
      case 'start_epic': return this.startEpic(a.epicId);
      case 'run': return this.run(a.role, a.epicId, a.stepAnchor, a.newIteration, a.reason);
      case 'transition': {
        const t = await this.o.store.applyEpicEvent(a.epicId, a.event, this.actor, a.reason);
        this.o.log(`${a.epicId}: ${t.from} → ${t.to} (${a.reason})`);
        return;
      }
      case 'verify': return this.verify(a.epicId);
      case 'complete_mechanically': return this.completeMechanically(a.epicId);
      case 'merge': return this.merge(a.epicId);
      case 'stop_run': {
        this.agents.get(a.runId)?.kill();
        this.o.log(`stopped run #${a.runId}: ${a.reason}`);
        return;
      }
      case 'surface': {
        const key = `${a.epicId}:${a.message}`;
        if (!this.surfaced.has(key)) this.o.log(`${a.epicId}: ${a.message}`);
        this.surfaced.add(key);
        return;
      }
    }
  }

  private async startEpic(epicId: string): Promise<void> {
    const plan = (await this.o.store.showPlans()).find((p) => p.epic_id === epicId);
    if (!plan) throw new Error(`${epicId} has no approved plan`);
    const wt = await ensureEpicWorktree(this.o.mainRoot, epicId, this.o.worktreeLocation);
    if (wt.dirty.length > 0) this.o.log(`${epicId}: worktree ${wt.path} has uncommitted changes (${wt.dirty.slice(0, 3).join(', ')}); left as they are`);
    await this.o.store.write((db, now) => setEpicWorktree(db, now.toISOString(), epicId, wt.path, wt.branch));
    if (await depositApprovedPlan(this.o.store, this.o.mainRoot, wt.path, epicId)) this.o.log(`${epicId}: committed the approved plan ${plan.plan_path} in ${wt.path}`);
    const t = await this.o.store.startEpic(epicId, loadPlanSource(this.planRoot(wt.path, plan.plan_path), plan.plan_path), this.actor);
    this.o.log(`${epicId}: ${t.from} → ${t.to} in ${wt.path}${wt.created ? ' (new worktree)' : ''}`);
  }

  /** The plan is read from the epic's worktree when it has the file, else from the main worktree. */
  private planRoot(worktree: string, planPath: string): string {
    return existsSync(join(worktree, planPath)) ? worktree : this.o.mainRoot;
  }

  private async run(role: Role, epicId: string, stepAnchor: string | null, newIteration: boolean, reason: string): Promise<void> {
    const command = this.o.config.roles[role as keyof RunConfig['roles']];
    if (!command) return;
    const epic = await this.o.store.getEpic(epicId);
    const worktree = epic.worktree_path ?? this.o.mainRoot;
    if (newIteration && !(await this.o.store.write((db, now) => countIteration(db, now.toISOString(), epicId, this.actor, reason)))) {
      this.o.log(`${epicId}: build budget spent; blocked`);
      return;
    }
    const plan = (await this.o.store.showPlans()).find((p) => p.epic_id === epicId);
    const env: Record<string, string> = {};
    let step = stepAnchor;
    if (role === 'ralph' && stepAnchor && plan) {
      const claim = await this.o.store.claimNext(loadPlanSource(this.planRoot(worktree, plan.plan_path), plan.plan_path), { worktree, agent: 'ralph' }, { leaseSeconds: this.o.config.leaseSeconds });
      if (!claim.claimed) return;
      step = claim.step_anchor;
      env.SPRINGFIELD_CLAIM_TOKEN = String(claim.claim_token);
    }
    env.SPRINGFIELD_AGENT = role;
    const argv = [...this.o.cli, 'run', '--role', role, '--epic', epicId, ...(step ? ['--step', step] : []), ...(plan ? ['--plan', plan.plan_path] : []), '--', ...command];
    const name = [ROLE_NAMES[role], epicId, step].filter(Boolean).join(' · ');
    this.o.log(`start ${name} (${reason})`);
    const agent = this.o.launcher.launch({ argv, cwd: worktree, env, name, role });
    const key = this.nextLocalId--;
    this.agents.set(key, agent);
    this.inFlight.set(key, { id: key, epicId, stepAnchor: step, role, startedAt: new Date().toISOString() });
    const done = agent.done.then((code) => {
      this.o.log(`${name} exited ${code}`);
      this.agents.delete(key);
      this.inFlight.delete(key);
      this.pending.delete(done);
    });
    this.pending.add(done);
  }

  private async verify(epicId: string): Promise<void> {
    const epic = await this.o.store.getEpic(epicId);
    const worktree = epic.worktree_path ?? this.o.mainRoot;
    const runId = await this.o.store.read((db) => db.prepare(`SELECT MAX(id) FROM runs WHERE epic_id = ? AND role = 'ralph'`).pluck().get(epicId) as number | null);
    const env: NodeJS.ProcessEnv = {};
    for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !isEditorVariable(k)) env[k] = v;
    const results = await this.pool.use(() => runVerification(this.o.config.verification, worktree, env));
    await this.o.store.write((db, now) => {
      for (const r of results) recordVerification(db, now.toISOString(), { runId, epicId, planPath: null, stepAnchor: null, command: r.command, exitCode: r.exit_code, verdict: r.verdict, durationMs: r.duration_ms, outputTail: r.output_tail });
    });
    const failed = results.find((r) => r.verdict === 'fail');
    this.o.log(`${epicId}: verification ${failed ? `FAILED (${failed.command} exited ${failed.exit_code})` : 'passed'}`);
  }

  private async completeMechanically(epicId: string): Promise<void> {
    const epic = await this.o.store.getEpic(epicId);
    const worktree = epic.worktree_path ?? this.o.mainRoot;
    const path = await this.o.store.read((db, now) => writeSummary(db, now, epicId, worktree));
    const git = schedulerGit(worktree);
    await git.add([summaryFileName(epicId)]);
    await git.commit(`Summary of ${epicId}`, [summaryFileName(epicId)], { '--trailer': `Springfield-Epic: ${epicId}` });
    const t = await this.o.store.write((db, now) => finishEpic(db, now.toISOString(), epicId, this.actor, `mechanical completion: all steps completed, verification passed; ${path}`));
    this.o.log(`${epicId}: ${t.from} → ${t.to} (mechanical completion, no agent session)`);
  }

  /** One merge at a time: rebase onto the current main, verify again, then land. */
  private async merge(epicId: string): Promise<void> {
    const epic = await this.o.store.read((db) => getEpic(db, epicId));
    const worktree = epic.worktree_path;
    if (worktree && existsSync(worktree)) {
      const { moved } = await rebaseOntoMain(this.o.mainRoot, worktree);
      if (moved && this.o.config.verification.length > 0) {
        await this.verify(epicId);
        const last = await this.o.store.read((db) => db.prepare(`SELECT verdict FROM verifications WHERE epic_id = ? ORDER BY id DESC LIMIT 1`).pluck().get(epicId) as string | undefined);
        if (last === 'fail') {
          this.o.log(`${epicId}: verification fails on the new main; not merged (it waits for a fix)`);
          return;
        }
      }
      if (this.o.config.merge === 'pr') {
        const url = await openPullRequest(worktree, epicId, epic.title);
        this.o.log(`${epicId}: pull request opened ${url}`);
        await this.o.store.applyEpicEvent(epicId, 'merged', this.actor, `pull request ${url}`);
        return;
      }
    }
    const r = await squashMerge(this.o.mainRoot, epicId, epic.title);
    await this.o.store.applyEpicEvent(epicId, 'merged', this.actor, `squash-merged as ${r.commit_hash.slice(0, 12)} with ${r.trailers} trailers`);
    await removeEpicWorktree(this.o.mainRoot, epicId, this.o.worktreeLocation);
    this.o.log(`${epicId}: merged as ${r.commit_hash.slice(0, 12)}; worktree removed; done`);
  }
}
