import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { applyEpicEvent, countIteration, getEpic, recordWorktreeEvent, setEpicWorktree, type EpicRow } from '../epics/epicStore.ts';
import { approvedVersion, finishEpic, livePlanPath, planDrift } from '../epics/planApproval.ts';
import { ROLE_NAMES } from '../epics/transitions.ts';
import { SpringfieldError } from '../errors.ts';
import { loadPlanSource } from '../plan/source.ts';
import { isEditorVariable } from '../runs/agentEnv.ts';
import { endGroup, groupOfRun } from '../runs/processGroup.ts';
import { findOrphans, finishRun, markOrphans, pidAlive, SETUP_ROLE, startRun } from '../runs/recordRun.ts';
import { timeoutFor, type AgentRole, type RunConfig } from '../runs/roles.ts';
import { decide } from '../scheduler/decide.ts';
import type { Action, RunSnapshot, SchedulerConfig } from '../scheduler/types.ts';
import { lastVerdict, latestRun, recordVerification, runsByLaunch } from '../store/runs.ts';
import type { SqliteStore } from '../store/sqliteStore.ts';
import type { Actor, PlanSource } from '../store/types.ts';
import { schedulerGit } from './git.ts';
import type { LaunchedAgent, Launcher } from './launcher.ts';
import { openPullRequest, rebaseOntoMain, squashMerge } from './merge.ts';
import { archiveWorktree, setUpWorktree, setupWanted } from './setup.ts';
import { schedulerSnapshot } from './snapshot.ts';
import { summaryFileName, writeSummary } from './summary.ts';
import { displayCommand, runVerification, SlotPool } from './verify.ts';
import { depositApprovedPlan, ensureEpicWorktree, removeEpicWorktree, type ApprovedPlan } from './worktrees.ts';
import { describeTidy, tidyWorktree } from './worktreeState.ts';

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
  /** Called after the orchestrator changed the store (a pass that did something, scheduler work that ended). */
  readonly onWrite?: () => void;
}

/** What the scheduler waits for once nothing else is left: a person, or a retry's backoff. */
export interface Waiting {
  readonly epic_id: string;
  readonly kind: 'person' | 'backoff';
  readonly message: string;
  /** When a backoff ends (ISO 8601); null for a person. */
  readonly until: string | null;
}

/** A launch of `springfield run` whose run row has not been seen yet: it holds its epic like a live run. */
interface Launch {
  readonly id: string;
  readonly placeholder: RunSnapshot;
  readonly role: AgentRole;
  readonly planPath: string | null;
  readonly worktree: string;
  readonly claimToken: number | null;
  readonly command: readonly string[];
  readonly agent: LaunchedAgent;
  exited: number | null;
}

type RunAction = Extract<Action, { kind: 'run' }>;

/**
 * Runs the scheduler: reads a snapshot, asks the pure decide() what to do, and does it — start
 * epics in their worktrees, set them up, claim and launch agents through `springfield run`,
 * verify, complete mechanically, merge. The store stays the truth; this object only remembers
 * its own children and the scheduler work (setup, verification, merge) it has under way.
 */
export class Orchestrator {
  private readonly o: OrchestratorOptions;
  private readonly launches = new Map<string, Launch>();
  private readonly agents = new Map<string, LaunchedAgent>();
  /** Setup, verification or merge under way, by epic: nothing else starts in that worktree meanwhile. */
  private readonly work = new Map<string, Promise<void>>();
  private readonly pending = new Set<Promise<unknown>>();
  private nextLocalId = -1;
  private readonly pool: SlotPool;
  private readonly mergeQueue = new SlotPool(1);
  private readonly surfaced = new Set<string>();
  private readonly stopped = new Map<number, number>();
  private runsSeen = new Map<number, RunSnapshot>();
  private waitingNow: Waiting[] = [];
  private readonly actor: Actor = { worktree: 'springfield-scheduler', agent: 'scheduler' };

  constructor(options: OrchestratorOptions) {
    this.o = options;
    this.pool = new SlotPool(Math.max(1, Math.floor(availableParallelism() / 2)));
  }

  private get schedulerConfig(): SchedulerConfig {
    const c = this.o.config;
    const timeoutsMs = Object.fromEntries(Object.entries(c.timeouts).map(([role, s]) => [role, s * 1000]));
    return {
      maxParallelAgents: c.maxParallelAgents, runTimeoutMs: c.runTimeoutSeconds * 1000, timeoutsMs, killGraceMs: c.killGraceSeconds * 1000,
      sameFailureLimit: this.o.sameFailureLimit ?? 3, roles: c.roles as SchedulerConfig['roles'], verificationConfigured: c.verification.length > 0,
      retryLimit: c.retryLimit, retryBackoffMs: c.retryBackoffSeconds.map((s) => s * 1000), setupConfigured: setupWanted(this.o.mainRoot, c.setup),
    };
  }

  /** One scheduling pass; returns the actions that did something (a failed action is logged, not returned). */
  async tick(): Promise<Action[]> {
    await this.reapOrphans();
    await this.reconcileLaunches();
    const stored = await this.o.store.read((db, now) => schedulerSnapshot(db, now));
    this.runsSeen = new Map(stored.runs.map((r) => [r.id, r]));
    const epics = stored.epics.map((e) => (this.work.has(e.id) ? { ...e, verification: { ...e.verification, running: true }, mergeQueued: true } : e));
    const snapshot = { epics, runs: [...stored.runs, ...[...this.launches.values()].map((l) => l.placeholder)] };
    const taken: Action[] = [];
    const waiting: Waiting[] = [];
    for (const action of decide(snapshot, this.schedulerConfig, new Date())) {
      if (action.kind === 'surface') waiting.push({ epic_id: action.epicId, kind: 'person', message: action.message, until: null });
      if (action.kind === 'wait') waiting.push({ epic_id: action.epicId, kind: 'backoff', message: action.message, until: action.until });
      try {
        if (await this.execute(action)) taken.push(action);
      } catch (err) {
        const message = err instanceof SpringfieldError ? err.message : err instanceof Error ? err.message : String(err);
        // The same failure every pass is reported once; the loop treats it as nothing to do.
        this.logOnce(`${action.kind}:${'epicId' in action ? action.epicId : ''}:${message}`, `${action.kind} ${'epicId' in action ? action.epicId : ''} failed: ${message}`);
      }
    }
    this.waitingNow = waiting;
    if (taken.length > 0) this.o.onWrite?.();
    return taken;
  }

  /** What the last pass found waiting for a person or a backoff. */
  get waiting(): readonly Waiting[] {
    return this.waitingNow;
  }

  /** True when nothing this orchestrator started (agents, setup, verification, merges) is under way. */
  get idle(): boolean {
    return this.launches.size === 0 && this.agents.size === 0 && this.work.size === 0;
  }

  /** Waits until every agent and every piece of work this orchestrator started has ended. */
  async settle(): Promise<void> {
    while (this.pending.size > 0) await Promise.race(this.pending);
  }

  /** A promise that resolves when any launched agent or scheduler work ends (for --watch). */
  nextExit(): Promise<unknown> {
    return this.pending.size > 0 ? Promise.race(this.pending) : new Promise(() => undefined);
  }

  /** Agents this orchestrator started that have not ended yet. */
  get activeAgents(): number {
    return this.agents.size;
  }

  stopAll(): void {
    for (const a of this.agents.values()) a.kill();
  }

  private logOnce(key: string, line: string): void {
    if (!this.surfaced.has(key)) this.o.log(line);
    this.surfaced.add(key);
  }

  private async execute(a: Action): Promise<boolean> {
    switch (a.kind) {
      case 'start_epic':
        await this.startEpic(a.epicId);
        return true;
      case 'run': return this.launch(a);
      case 'transition': {
        const t = await this.o.store.write((db, now) => applyEpicEvent(db, now.toISOString(), a.epicId, a.event, this.actor, a.reason, a.data ? { ...a.data } : {}));
        this.o.log(`${a.epicId}: ${t.from} → ${t.to} (${a.reason})`);
        if (a.event === 'agent_failed') this.o.log(`${a.epicId}: nothing more is started for it until a person retries: springfield epic retry ${a.epicId}`);
        return true;
      }
      case 'verify': return this.background(a.epicId, () => this.verify(a.epicId));
      case 'setup': return this.background(a.epicId, () => this.setup(a.epicId));
      case 'complete_mechanically':
        await this.completeMechanically(a.epicId);
        return true;
      case 'merge': return this.background(a.epicId, () => this.mergeQueue.use(() => this.merge(a.epicId)));
      case 'stop_run':
        this.stopRun(a.runId, a.reason);
        return false;
      case 'surface':
        this.logOnce(`${a.epicId}:${a.message}`, `${a.epicId}: ${a.message}`);
        return false;
      case 'wait':
        this.logOnce(`${a.epicId}:wait:${a.until}`, `${a.epicId}: ${a.message}`);
        return false;
    }
  }

  /** Runs scheduler work for an epic in the background; the epic counts as busy until it ends. */
  private background(epicId: string, fn: () => Promise<void>): boolean {
    if (this.work.has(epicId)) return false;
    const job: Promise<void> = fn().catch((err: unknown) => {
      this.o.log(`${epicId}: ${err instanceof Error ? err.message : String(err)}`);
    }).finally(() => {
      this.work.delete(epicId);
      this.pending.delete(job);
      this.o.onWrite?.();
    });
    this.work.set(epicId, job);
    this.pending.add(job);
    return true;
  }

  /** Runs whose supervisor died: their agents' process groups are ended, then the runs are marked lost and release their steps. */
  private async reapOrphans(): Promise<void> {
    const orphans = await this.o.store.read((db) => findOrphans(db));
    if (orphans.length === 0) return;
    for (const r of orphans) {
      if (r.agent_pid !== null && groupOfRun(r.agent_pid, r.id)) await endGroup(r.agent_pid, this.o.config.killGraceSeconds * 1000);
    }
    const lost = await this.o.store.write((db, now) => markOrphans(db, pidAlive, now, this.actor));
    for (const r of lost) this.o.log(`run #${r.id} (${r.role} ${r.epic_id ?? ''} ${r.step_anchor ?? ''}) is gone; marked lost — its step is released at once`);
    if (lost.length > 0) this.o.onWrite?.();
  }

  /**
   * Launches whose run row has appeared are the store's from now on; a launch that ended without
   * ever recording a run (the CLI refused, could not start) is recorded as a failed run, so it counts
   * like any fault and its claim is released.
   */
  private async reconcileLaunches(): Promise<void> {
    if (this.launches.size === 0) return;
    const ended = [...this.launches.values()].filter((l) => l.exited !== null);
    const seen = new Set((await this.o.store.read((db) => runsByLaunch(db, [...this.launches.keys()]))).map((r) => r.launch_id));
    for (const l of this.launches.values()) if (seen.has(l.id)) this.launches.delete(l.id);
    for (const l of ended) {
      if (seen.has(l.id)) continue;
      this.launches.delete(l.id);
      const tail = l.agent.tail?.() ?? '';
      const last = tail.trim().split('\n').at(-1)?.trim();
      const epicId = l.placeholder.epicId ?? '';
      const run = await this.o.store.write((db, now) => {
        const epic = getEpic(db, epicId);
        const row = startRun(db, now, {
          epicId, planPath: l.planPath, stepAnchor: l.placeholder.stepAnchor, role: l.role, iteration: l.role === 'lisa' ? epic.plan_iteration : epic.iteration,
          worktree: l.worktree, agentId: l.role, command: l.command, pid: process.pid, claimToken: l.claimToken, launchId: l.id,
        }, this.actor);
        return finishRun(db, now, row.id, { exitCode: l.exited ?? 1, signal: null, outputTail: tail, fault: `springfield run exited ${l.exited} before recording the run${last ? `: ${last}` : ''}` }, this.actor);
      });
      this.o.log(`${epicId}: ${ROLE_NAMES[l.role]} never started (run #${run.id} recorded as failed: ${run.outcome_reason ?? ''})`);
      this.o.onWrite?.();
    }
  }

  /** The backstop for a run past its timeout: SIGTERM to its supervisor, then SIGKILL to it and its agent's group. */
  private stopRun(runId: number, reason: string): void {
    const run = this.runsSeen.get(runId);
    if (!run?.pid || !pidAlive(run.pid)) return;
    const first = this.stopped.get(runId);
    if (first === undefined) {
      this.stopped.set(runId, Date.now());
      process.kill(run.pid, 'SIGTERM');
      this.o.log(`stopping run #${runId}: ${reason}`);
    } else if (Date.now() - first > this.o.config.killGraceSeconds * 1000 + 5000) {
      process.kill(run.pid, 'SIGKILL');
      if (run.agentPid && groupOfRun(run.agentPid, runId)) void endGroup(run.agentPid, 0);
      this.logOnce(`kill:${runId}`, `killed run #${runId}: its supervisor did not end it`);
    }
  }

  private async startEpic(epicId: string): Promise<void> {
    const { planPath, approved } = await this.o.store.read((db) => ({ planPath: livePlanPath(db, epicId), approved: approvedPlanOf(getEpic(db, epicId), db) }));
    if (!planPath) throw new Error(`${epicId} has no approved plan`);
    const wt = await ensureEpicWorktree(this.o.mainRoot, epicId, this.o.worktreeLocation, approved ?? undefined);
    if (wt.dirty.length > 0) this.o.log(`${epicId}: worktree ${wt.path} has uncommitted changes (${wt.dirty.slice(0, 3).join(', ')}); left as they are`);
    await this.o.store.write((db, now) => setEpicWorktree(db, now.toISOString(), epicId, wt.path, wt.branch));
    const t = await this.o.store.startEpic(epicId, loadPlanSource(this.planRoot(wt.path, planPath), planPath), this.actor);
    this.o.log(`${epicId}: ${t.from} → ${t.to} in ${wt.path}${wt.created ? ' (new worktree)' : ''}${wt.handoffCommitted && approved ? ` with approved plan v${approved.version} committed` : ''}`);
  }

  /** The plan is read from the epic's worktree when it has the file, else from the main worktree. */
  private planRoot(worktree: string, planPath: string): string {
    return existsSync(join(worktree, planPath)) ? worktree : this.o.mainRoot;
  }

  /**
   * Puts the epic's own worktree in a known state before anything runs there (a missing one is made
   * again): a stale git lock cleared, the epic's branch back, leftovers committed as WIP.
   */
  private async tidy(epic: EpicRow): Promise<void> {
    if (!epic.worktree_path || !epic.branch || epic.worktree_path === this.o.mainRoot) return;
    if (!existsSync(epic.worktree_path)) {
      const approved = await this.o.store.read((db) => approvedPlanOf(epic, db));
      await ensureEpicWorktree(this.o.mainRoot, epic.id, this.o.worktreeLocation, approved ?? undefined);
      this.o.log(`${epic.id}: its worktree was gone; made it again at ${epic.worktree_path}`);
    }
    const last = await this.o.store.read((db) => latestRun(db, epic.id));
    const label = last ? `after run ${last.id} (${last.role}${last.step_anchor ? ` on ${last.step_anchor}` : ''}, ${last.status})` : 'found in the worktree';
    const report = await tidyWorktree(epic.worktree_path, epic.branch.replace(/^refs\/heads\//, ''), label);
    const line = describeTidy(report);
    if (!line) return;
    this.o.log(`${epic.id}: ${line}`);
    await this.o.store.write((db, now) => recordWorktreeEvent(db, now.toISOString(), epic.id, this.actor, 'tidy', line, { ...report }));
  }

  /**
   * The plan a builder works from, read in the epic's worktree: restored from the approved text if
   * an agent removed it; when its structure drifted from the approved version, the epic is blocked
   * (plan_drift) with the changes and null is returned, so no builder starts.
   */
  private async builderPlan(epic: EpicRow, planPath: string, worktree: string): Promise<PlanSource | null> {
    const approved = await this.o.store.read((db) => approvedPlanOf(epic, db));
    if (approved && worktree !== this.o.mainRoot && !existsSync(join(worktree, planPath))) {
      await depositApprovedPlan(worktree, epic.id, approved);
      this.o.log(`${epic.id}: ${planPath} was missing from the worktree; committed the approved v${approved.version} again`);
    }
    let changes: string[];
    let source: PlanSource | null = null;
    try {
      source = loadPlanSource(worktree, planPath);
      const current = source;
      changes = await this.o.store.read((db) => planDrift(db, planPath, current));
    } catch (err) {
      changes = [err instanceof Error ? err.message : String(err)];
    }
    if (changes.length === 0) return source;
    const reason = `plan_drift: ${planPath} in ${worktree} differs from the approved${approved ? ` v${approved.version}` : ''} (${changes.slice(0, 5).join('; ')}${changes.length > 5 ? '; …' : ''}); restore it (springfield plan show ${epic.id} has the approved text) and retry`;
    const t = await this.o.store.write((db, now) => applyEpicEvent(db, now.toISOString(), epic.id, 'plan_drift', this.actor, reason, { plan_path: planPath, changes }));
    this.o.log(`${epic.id}: ${t.from} → ${t.to}: no builder starts on a drifted plan — ${reason}`);
    return null;
  }

  private async launch(a: RunAction): Promise<boolean> {
    const role = a.role as AgentRole;
    const command = this.o.config.roles[role];
    if (!command) return false;
    const epic = await this.o.store.getEpic(a.epicId);
    await this.tidy(epic);
    const worktree = epic.worktree_path ?? this.o.mainRoot;
    if (a.newIteration && !(await this.o.store.write((db, now) => countIteration(db, now.toISOString(), a.epicId, this.actor, a.reason)))) {
      this.o.log(`${a.epicId}: build budget spent; blocked`);
      return true;
    }
    const planPath = await this.o.store.read((db) => livePlanPath(db, a.epicId));
    const env: Record<string, string> = {};
    let step = a.stepAnchor;
    let claimToken: number | null = null;
    if (role === 'ralph' && planPath) {
      const source = await this.builderPlan(epic, planPath, worktree);
      if (!source) return true;
      if (a.stepAnchor) {
        const claim = await this.o.store.claimNext(source, { worktree, agent: 'ralph' }, { leaseSeconds: this.o.config.leaseSeconds });
        if (!claim.claimed) return false;
        step = claim.step_anchor;
        claimToken = claim.claim_token;
        env.SPRINGFIELD_CLAIM_TOKEN = String(claim.claim_token);
      }
    }
    const launchId = randomUUID();
    env.SPRINGFIELD_AGENT = role;
    env.SPRINGFIELD_LAUNCH_ID = launchId;
    const argv = [...this.o.cli, 'run', '--role', role, '--epic', a.epicId, ...(step ? ['--step', step] : []), ...(planPath ? ['--plan', planPath] : []),
      '--timeout', String(timeoutFor(this.o.config, role)), '--', ...command];
    const name = [ROLE_NAMES[role], a.epicId, step].filter(Boolean).join(' · ');
    this.o.log(`start ${name} (${a.reason})`);
    let agent: LaunchedAgent;
    try {
      agent = this.o.launcher.launch({ argv, cwd: worktree, env, name, role });
    } catch (err) {
      const message = `cannot launch: ${err instanceof Error ? err.message : String(err)}`;
      agent = { done: Promise.resolve(127), kill: () => undefined, tail: () => message };
    }
    const launch: Launch = {
      id: launchId, placeholder: { id: this.nextLocalId--, epicId: a.epicId, stepAnchor: step, role, startedAt: new Date().toISOString() },
      role, planPath, worktree, claimToken, command, agent, exited: null,
    };
    this.launches.set(launchId, launch);
    this.agents.set(launchId, agent);
    const done = agent.done.then((code) => {
      this.o.log(`${name} exited ${code}`);
      launch.exited = code;
      this.agents.delete(launchId);
      this.pending.delete(done);
    });
    this.pending.add(done);
    return true;
  }

  /** Copies `.worktreeinclude` files and runs the setup commands in the epic's worktree, recorded like an agent run. */
  private async setup(epicId: string): Promise<void> {
    const epic = await this.o.store.getEpic(epicId);
    const worktree = epic.worktree_path;
    if (!worktree) return;
    const commands = this.o.config.setup;
    const shown = commands.length ? commands.map(displayCommand) : ['copy the files .worktreeinclude lists'];
    const run = await this.o.store.write((db, now) => startRun(db, now, {
      epicId, planPath: null, stepAnchor: null, role: SETUP_ROLE, iteration: epic.iteration, worktree, agentId: SETUP_ROLE, command: shown, pid: process.pid,
    }, this.actor));
    this.o.log(`${epicId}: setting up ${worktree} (run #${run.id}: ${shown.join('; ')})`);
    const r = await setUpWorktree({
      mainRoot: this.o.mainRoot, worktree, commands, timeoutMs: timeoutFor(this.o.config, 'setup') * 1000, graceMs: this.o.config.killGraceSeconds * 1000,
      env: { ...this.childEnv(), SPRINGFIELD_EPIC: epicId, SPRINGFIELD_WORKTREE: worktree, SPRINGFIELD_MAIN_WORKTREE: this.o.mainRoot },
    });
    const ended = await this.o.store.write((db, now) => finishRun(db, now, run.id, { exitCode: r.exitCode, signal: null, timedOut: r.timedOut, outputTail: r.output, fault: r.reason }, this.actor));
    this.o.log(`${epicId}: setup ${ended.status}${r.reason ? ` — ${r.reason}` : ''}`);
  }

  private childEnv(): NodeJS.ProcessEnv {
    const env: NodeJS.ProcessEnv = {};
    for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !isEditorVariable(k) && !k.startsWith('SPRINGFIELD_')) env[k] = v;
    return env;
  }

  private async verify(epicId: string): Promise<void> {
    const epic = await this.o.store.getEpic(epicId);
    await this.tidy(epic);
    const worktree = epic.worktree_path ?? this.o.mainRoot;
    const runId = (await this.o.store.read((db) => latestRun(db, epicId, 'ralph')))?.id ?? null;
    const results = await this.pool.use(() => runVerification(this.o.config.verification, worktree, this.childEnv()));
    await this.o.store.write((db, now) => {
      for (const r of results) recordVerification(db, now.toISOString(), { runId, epicId, planPath: null, stepAnchor: null, command: r.command, exitCode: r.exit_code, verdict: r.verdict, durationMs: r.duration_ms, outputTail: r.output_tail });
    });
    const failed = results.find((r) => r.verdict === 'fail');
    this.o.log(`${epicId}: verification ${failed ? `FAILED (${failed.command} exited ${failed.exit_code})` : 'passed'}`);
  }

  private async completeMechanically(epicId: string): Promise<void> {
    const epic = await this.o.store.getEpic(epicId);
    await this.tidy(epic);
    const worktree = epic.worktree_path ?? this.o.mainRoot;
    const path = await this.o.store.read((db, now) => writeSummary(db, now, epicId, worktree));
    const git = schedulerGit(worktree);
    await git.add([summaryFileName(epicId)]);
    await git.commit(`Summary of ${epicId}`, [summaryFileName(epicId)], { '--trailer': `Springfield-Epic: ${epicId}` });
    const t = await this.o.store.write((db, now) => finishEpic(db, now.toISOString(), epicId, this.actor, `mechanical completion: all steps completed, verification passed; ${path}`));
    this.o.log(`${epicId}: ${t.from} → ${t.to} (mechanical completion, no agent session)`);
  }

  /** One merge at a time: rebase onto the current main, verify again, then land; archive, then remove the worktree. */
  private async merge(epicId: string): Promise<void> {
    const epic = await this.o.store.getEpic(epicId);
    const worktree = epic.worktree_path;
    if (worktree && existsSync(worktree)) {
      await this.tidy(epic);
      const { moved } = await rebaseOntoMain(this.o.mainRoot, worktree);
      if (moved && this.o.config.verification.length > 0) {
        await this.verify(epicId);
        if ((await this.o.store.read((db) => lastVerdict(db, epicId))) === 'fail') {
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
    const failed = worktree && existsSync(worktree) ? await archiveWorktree(worktree, this.o.config.archive, this.childEnv(), timeoutFor(this.o.config, 'setup') * 1000) : null;
    if (failed) {
      this.o.log(`${epicId}: merged as ${r.commit_hash.slice(0, 12)}; done. The archive command \`${failed.command}\` exited ${failed.exit_code}, so the worktree ${worktree} is kept:\n${failed.output_tail.trimEnd().split('\n').slice(-5).join('\n')}`);
      return;
    }
    await removeEpicWorktree(this.o.mainRoot, epicId, this.o.worktreeLocation);
    this.o.log(`${epicId}: merged as ${r.commit_hash.slice(0, 12)}; worktree removed; done`);
  }
}

/** The approved version's text for the epic's branch, or null before approval. */
function approvedPlanOf(epic: EpicRow, db: Parameters<typeof approvedVersion>[0]): ApprovedPlan | null {
  const v = approvedVersion(db, epic);
  return v ? { planPath: v.plan_path, body: v.body, version: v.version } : null;
}
