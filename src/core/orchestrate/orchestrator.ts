import { chooseCommand } from './presetChoice.ts';
import { clock, limitedUntil } from '../limits/hostLimits.ts';
import { limitKeyOf } from '../limits/runLimit.ts';
import { randomUUID } from 'node:crypto';
import { preflight } from '../agents/preflight.ts';
import { ROLE_NAMES } from '../epics/transitions.ts';
import { isEditorVariable } from '../runs/agentEnv.ts';
import { endGroup, groupOfRun, pidAlive } from '../runs/processGroup.ts';
import { timeoutFor, type AgentRole, type RunConfig } from '../runs/runConfig.ts';
import { decide } from '../scheduler/decide.ts';
import { unavailableReason } from '../scheduler/faults.ts';
import { MESSAGES } from '../scheduler/rules.ts';
import type { Action, RunSnapshot, SchedulerConfig } from '../scheduler/types.ts';
import { unstaffedEpics, type Unstaffed } from '../scheduler/unstaffed.ts';
import type { Actor, Store } from '../store/index.ts';
import { agentPlaceProblem } from './agentPlace.ts';
import { EpicWork } from './epicWork.ts';
import { FilesAware } from './filesAware.ts';
import type { ConflictAhead } from './conflictsAhead.ts';
import type { LaunchedAgent, Launcher } from './agentLauncher.ts';
import {
  createPlanningWorktree,
  planningEpicOf,
  planningWorktreePath,
  removePlanningWorktree,
  sweepPlanningWorktrees,
} from './planningWorktree.ts';
import { releaseWorktreePorts } from './worktreePorts.ts';
import { routedCommand } from './routedCommand.ts';
import { schedulerConfigOf } from './schedulerConfig.ts';
import { mainChanges } from './merge.ts';
import { Fleet, type HeavyKind, type Parallel } from './fleet.ts';
import { Notifier } from './notify.ts';
import { messageOf } from '../../shared/errorMessage.ts';
import { roleSpec, ROLE_REGISTRY } from '../../shared/roles.ts';

export interface OrchestratorOptions {
  readonly store: Store;
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
  /** Called before an epic's worktree is removed after its merge (the editor closes it in Source Control first). */
  readonly beforeWorktreeRemoved?: (path: string) => Promise<void>;
}

/** What the scheduler waits for once nothing else is left: a person, a retry's backoff, or another epic's work on the same files. */
export interface Waiting {
  readonly epic_id: string;
  /** machine, slot, queue: the fleet holds it (docs/scheduler.md, "The fleet"); limit: a preset's usage limit. */
  readonly kind: 'person' | 'backoff' | 'files' | 'budget' | 'machine' | 'slot' | 'queue' | 'limit';
  readonly message: string;
  /** When a backoff or a preset's usage limit ends, or the daily budget starts again (the next UTC day; ISO 8601); null for a person or files. */
  readonly until: string | null;
}

/** The waiting entry of a surface, wait or check_pr action; null for any other. */
export function waitingOf(action: Action): Waiting | null {
  if (action.kind === 'surface')
    return { epic_id: action.epicId, kind: 'person', message: action.message, until: null };
  if (action.kind === 'wait') {
    const kind = action.hold ?? (action.dailyBudget ? 'budget' : action.until === null ? 'files' : 'backoff');
    return { epic_id: action.epicId, kind, message: action.message, until: action.until };
  }
  if (action.kind === 'check_pr')
    return { epic_id: action.epicId, kind: 'person', message: MESSAGES.pullRequestOpen(action.url), until: null };
  return null;
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
  private readonly jobs = new Map<string, Promise<void>>();
  private readonly jobKinds = new Map<string, HeavyKind>();
  /** Admission, slots and auto parallelism (fleet.ts); the notify command (notify.ts). */
  private readonly fleet: Fleet;
  private readonly notifier: Notifier;
  private readonly pending = new Set<Promise<unknown>>();
  private nextLocalId = -1;
  private readonly work: EpicWork;
  private readonly surfaced = new Set<string>();
  private readonly stopped = new Map<number, number>();
  /**
   * Per epic, which of this scheduler's planning runs owns the planning worktree now: a run that
   * ends removes it only while it is still its own (the next run may already have a fresh one at the
   * same path when the old process's exit is seen late).
   */
  private readonly planningOwner = new Map<string, number>();
  private planningRuns = 0;
  private runsSeen = new Map<number, RunSnapshot>();
  private waitingNow: Waiting[] = [];
  /** Launches this pass held back because every preset of the role is limited on this host. */
  private readonly limitWaits: Waiting[] = [];
  private unstaffedNow: Unstaffed[] = [];
  private readonly actor: Actor = { worktree: 'springfield-scheduler', agent: 'scheduler' };
  private swept = false;
  /** Each role command's preflight, once per scheduler's life while it passes (docs/scheduler-faults.md, "An agent that cannot run"). */
  private readonly preflights = new Map<string, Promise<string | null>>();
  /** Files-aware scheduling (docs/files.md): the steps' files, read each pass, and the conflicts ahead, predicted after each build. */
  private readonly files: FilesAware;
  /**
   * An agent or a piece of work this orchestrator started ended after the last pass read the store:
   * that pass could not act on it, so the orchestrator is not idle until the next one has looked.
   */
  private endedUnseen = false;

  constructor(options: OrchestratorOptions) {
    // A location given here (a flag, an editor setting) wins over the config's worktreeRoot.
    this.o = { ...options, worktreeLocation: options.worktreeLocation || options.config.worktreeRoot };
    this.work = new EpicWork({
      store: options.store,
      mainRoot: options.mainRoot,
      config: options.config,
      log: options.log,
      worktreeLocation: this.o.worktreeLocation,
      actor: this.actor,
      resolveConflict: (epicId, worktree, brief) => this.conflictSession(epicId, worktree, brief),
      beforeWorktreeRemoved: options.beforeWorktreeRemoved,
    });
    this.fleet = new Fleet(options.config, options.log);
    this.notifier = new Notifier(options.config.notify?.command ?? null, options.mainRoot, options.log);
    this.files = new FilesAware({
      store: options.store,
      mainRoot: options.mainRoot,
      config: options.config,
      log: options.log,
      logOnce: (key, line) => this.logOnce(key, line),
      resolving: async (epicId, worktree) => this.work.resolving(await this.o.store.getEpic(epicId), worktree),
    });
  }

  private get schedulerConfig(): SchedulerConfig {
    return schedulerConfigOf(this.o.config, this.o.mainRoot, this.o.sameFailureLimit, this.fleet.parallel.current);
  }

  /** How many agents may run at once now ("auto": its current value). */
  get parallel(): Parallel {
    return this.fleet.parallel;
  }

  /** The conflicts ahead predicted after the builds so far, per epic under way (the editor shows them; docs/files.md). */
  get conflictsAhead(): ReadonlyMap<string, readonly ConflictAhead[]> {
    return this.files.conflictsAhead;
  }

  /** One scheduling pass; returns the actions that did something (a failed action is logged, not returned). */
  async tick(): Promise<Action[]> {
    await this.reapOrphans();
    if (!this.swept) await this.sweepPlanning();
    await this.reconcileLaunches();
    this.endedUnseen = false;
    const stored = await this.files.annotate(await this.o.store.schedulerSnapshot());
    this.runsSeen = new Map(stored.runs.map((r) => [r.id, r]));
    const epics = stored.epics.map((e) =>
      this.jobs.has(e.id) ? { ...e, verification: { ...e.verification, running: true }, mergeQueued: true } : e,
    );
    const snapshot = {
      ...stored,
      epics,
      runs: [...stored.runs, ...[...this.launches.values()].map((l) => l.placeholder)],
      fleet: this.fleet.look(this.jobKinds.values()),
    };
    const taken: Action[] = [];
    const waiting: Waiting[] = [];
    for (const action of decide(snapshot, this.schedulerConfig, new Date())) {
      const waits = waitingOf(action);
      if (waits) waiting.push(waits);
      // A person's uncommitted changes in the main worktree hold a local merge: it waits, saying so, and is not tried again each pass.
      // While one of Springfield's own merges is under way the changes there are its own: this merge queues behind it
      // (squashMerge still refuses a person's changes when its turn comes).
      if (action.kind === 'merge' && this.o.config.merge !== 'pr' && !this.jobs.has(action.epicId) && !this.merging()) {
        const dirty = await mainChanges(this.o.mainRoot).catch(() => []);
        if (dirty.length > 0) {
          waiting.push({ epic_id: action.epicId, kind: 'person', message: MESSAGES.mainDirty(dirty), until: null });
          this.logOnce(
            `main_dirty:${action.epicId}:${dirty.join('\0')}`,
            `${action.epicId}: ${MESSAGES.mainDirty(dirty)}`,
          );
          continue;
        }
      }
      try {
        if (await this.execute(action)) taken.push(action);
      } catch (err) {
        const message = messageOf(err);
        // The same failure every pass is reported once; the loop treats it as nothing to do.
        this.logOnce(
          `${action.kind}:${'epicId' in action ? action.epicId : ''}:${message}`,
          `${action.kind} ${'epicId' in action ? action.epicId : ''} failed: ${message}`,
        );
      }
    }
    this.waitingNow = [...waiting, ...this.limitWaits.splice(0)];
    this.notifier.update(waiting.filter((w) => w.kind === 'person'));
    const acted = new Set<string>(this.jobs.keys());
    for (const r of snapshot.runs) if (r.epicId) acted.add(r.epicId);
    for (const w of waiting) acted.add(w.epic_id);
    for (const a of taken) if ('epicId' in a) acted.add(a.epicId);
    this.unstaffedNow = unstaffedEpics(snapshot.epics, this.schedulerConfig, acted);
    if (taken.length > 0) this.o.onWrite?.();
    return taken;
  }

  /** What the last pass found waiting for a person or a backoff. */
  get waiting(): readonly Waiting[] {
    return this.waitingNow;
  }

  /** Epics the last pass left alone because the role that acts next has no agent configured. */
  get unstaffed(): readonly Unstaffed[] {
    return this.unstaffedNow;
  }

  /** The roles with an agent command configured. */
  get configuredRoles(): string[] {
    return Object.entries(this.o.config.roles)
      .filter(([, command]) => (command?.length ?? 0) > 0)
      .map(([role]) => role);
  }

  /** True when nothing this orchestrator started (agents, setup, verification, merges) is under way, nor ended unseen by the last pass. */
  get idle(): boolean {
    return this.launches.size === 0 && this.agents.size === 0 && this.jobs.size === 0 && !this.endedUnseen;
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
        await this.work.startEpic(a.epicId);
        return true;
      case 'run':
        return this.launch(a);
      case 'transition': {
        const t = await this.o.store.applyEpicEvent(a.epicId, a.event, this.actor, a.reason, a.data ?? {});
        this.o.log(`${a.epicId}: ${t.from} → ${t.to} (${a.reason})`);
        if (a.event === 'agent_failed')
          this.o.log(
            `${a.epicId}: nothing more is started for it until a person retries: springfield epic retry ${a.epicId}`,
          );
        return true;
      }
      case 'verify':
        return this.background(a.epicId, 'verify', () => this.work.verify(a.epicId));
      case 'setup':
        return this.background(a.epicId, 'setup', () => this.work.setup(a.epicId));
      case 'complete_mechanically':
        await this.work.completeMechanically(a.epicId);
        return true;
      case 'merge':
        return this.background(a.epicId, 'merge', () => this.work.merge(a.epicId));
      case 'check_pr':
        // Quick and rate-limited: done within the pass, so an open pull request is waiting, not work under way.
        await this.work.checkPullRequest(a.epicId);
        return true;
      case 'stop_run':
        this.stopRun(a.runId, a.reason);
        return false;
      case 'surface':
        this.logOnce(`${a.epicId}:${a.message}`, `${a.epicId}: ${a.message}`);
        return false;
      case 'wait':
        // The daily budget holds every epic at once: said once a day and limit, not once per epic or pass (docs/budgets.md).
        if (a.dailyBudget) this.logOnce(`daily_budget:${a.dailyBudget.day}:${a.dailyBudget.limit}`, a.message);
        // Admission says when it starts and ends holding (fleet.ts), not once per epic and reading.
        else if (a.hold !== 'machine')
          this.logOnce(`${a.epicId}:wait:${a.until ?? a.message}`, `${a.epicId}: ${a.message}`);
        return false;
    }
  }

  /** True while a merge this orchestrator started is under way (it writes to the main worktree). */
  private merging(): boolean {
    return [...this.jobKinds.values()].includes('merge');
  }

  /** Runs scheduler work for an epic in the background; the epic counts as busy until it ends. */
  private background(epicId: string, kind: HeavyKind, fn: () => Promise<void>): boolean {
    if (this.jobs.has(epicId)) return false;
    const job: Promise<void> = fn()
      .catch((err: unknown) => {
        this.o.log(`${epicId}: ${messageOf(err)}`);
      })
      .finally(() => {
        this.endedUnseen = true;
        this.jobs.delete(epicId);
        this.jobKinds.delete(epicId);
        this.pending.delete(job);
        this.o.onWrite?.();
      });
    this.jobs.set(epicId, job);
    this.jobKinds.set(epicId, kind);
    this.pending.add(job);
    return true;
  }

  /** Runs whose supervisor died: their agents' process groups are ended, then the runs are marked lost and release their steps. */
  private async reapOrphans(): Promise<void> {
    const orphans = await this.o.store.findOrphans(pidAlive);
    if (orphans.length === 0) return;
    for (const r of orphans) {
      if (r.agent_pid !== null && groupOfRun(r.agent_pid, r.id))
        await endGroup(r.agent_pid, this.o.config.killGraceSeconds * 1000);
    }
    const lost = await this.o.store.markOrphans(pidAlive, this.actor);
    for (const r of lost)
      this.o.log(
        `run #${r.id} (${r.role} ${r.epic_id ?? ''} ${r.step_anchor ?? ''}) is gone; marked lost — its step is released at once`,
      );
    for (const r of lost) {
      const epicId = planningEpicOf(r.worktree);
      if (roleSpec(r.role)?.worktree === 'planning' && epicId && !this.planningOwner.has(epicId))
        await this.removePlanning(epicId);
    }
    if (lost.length > 0) this.o.onWrite?.();
  }

  /** At start: planning worktrees a scheduler that died left behind, which no live run uses, are removed (docs/lifecycle.md). */
  private async sweepPlanning(): Promise<void> {
    this.swept = true;
    try {
      const live = (await this.o.store.runs({ active: true, limit: 1000 })).filter(
        (r) => r.worktree !== null && r.pid !== null && pidAlive(r.pid),
      );
      const s = await sweepPlanningWorktrees(
        this.o.mainRoot,
        new Set(live.map((r) => r.worktree as string)),
        pidAlive,
        this.o.worktreeLocation,
      );
      for (const p of s.removed)
        this.o.log(`removed the planning worktree ${p}: left by a scheduler that stopped, no live run uses it`);
      for (const p of s.refused) this.o.log(`left ${p} alone: it is a symbolic link, not a planning worktree`);
    } catch (err) {
      this.o.log(`could not sweep leftover planning worktrees: ${messageOf(err)}`);
    }
  }

  /**
   * Launches whose run row has appeared are the store's from now on; a launch that ended without
   * ever recording a run (the CLI refused, could not start) is recorded as a failed run, so it counts
   * like any fault and its claim is released.
   */
  private async reconcileLaunches(): Promise<void> {
    if (this.launches.size === 0) return;
    const ended = [...this.launches.values()].filter((l) => l.exited !== null);
    const seen = new Set((await this.o.store.runsByLaunch([...this.launches.keys()])).map((r) => r.launch_id));
    for (const l of this.launches.values()) if (seen.has(l.id)) this.launches.delete(l.id);
    for (const l of ended) {
      if (seen.has(l.id)) continue;
      this.launches.delete(l.id);
      const tail = l.agent.tail?.() ?? '';
      const last = tail.trim().split('\n').at(-1)?.trim();
      const epicId = l.placeholder.epicId ?? '';
      const run = await this.o.store.recordFailedLaunch(
        {
          epicId,
          planPath: l.planPath,
          stepAnchor: l.placeholder.stepAnchor,
          role: l.role,
          worktree: l.worktree,
          agentId: l.role,
          command: l.command,
          pid: process.pid,
          claimToken: l.claimToken,
          launchId: l.id,
        },
        {
          exitCode: l.exited ?? 1,
          signal: null,
          outputTail: tail,
          fault: `springfield run exited ${l.exited} before recording the run${last ? `: ${last}` : ''}`,
        },
        this.actor,
      );
      this.o.log(
        `${epicId}: ${ROLE_NAMES[l.role]} never started (run #${run.id} recorded as failed: ${run.outcome_reason ?? ''})`,
      );
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

  /**
   * Why a role command cannot run (not installed, not logged in), or null: checked before its first
   * launch in this scheduler's life and kept while it passes; a failure is checked again next time,
   * which is after a person's retry (the epic is blocked meanwhile).
   */
  private async preflightOf(command: readonly string[]): Promise<string | null> {
    const key = JSON.stringify(command);
    let check = this.preflights.get(key);
    if (!check) {
      const env: NodeJS.ProcessEnv = {};
      for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !isEditorVariable(k)) env[k] = v;
      check = preflight(command, env, this.o.mainRoot).then(
        (p) => p.reason,
        () => null,
      );
      this.preflights.set(key, check);
    }
    const reason = await check;
    if (reason !== null) this.preflights.delete(key);
    return reason;
  }

  /** Removes the epic's planning worktree if planning run `run` still owns it. */
  private async removeOwnPlanning(epicId: string, run: number): Promise<void> {
    if (run === 0 || this.planningOwner.get(epicId) !== run) return;
    this.planningOwner.delete(epicId);
    await this.removePlanning(epicId);
  }

  /** Removes an epic's planning worktree; a failure is logged (the next planning run makes a fresh one). */
  private async removePlanning(epicId: string): Promise<void> {
    try {
      if (await removePlanningWorktree(this.o.mainRoot, epicId, this.o.worktreeLocation)) {
        await releaseWorktreePorts(
          this.o.store,
          planningWorktreePath(this.o.mainRoot, epicId, this.o.worktreeLocation),
          process.env,
        );
        this.o.log(`${epicId}: planning worktree removed`);
      }
    } catch (err) {
      this.o.log(`${epicId}: could not remove the planning worktree: ${messageOf(err)}`);
    }
  }

  /**
   * The command to start for the role: its first preset that is not limited on this host and can run,
   * else its fallbacks in order (presetChoice.ts); null, with the wait recorded, while all are limited.
   */
  private async commandFor(
    epicId: string,
    role: AgentRole,
  ): Promise<{ command: readonly string[]; unavailable: string | null } | null> {
    const holdMs = (timeoutFor(this.o.config, role) + this.o.config.killGraceSeconds + 60) * 1000;
    const choice = await chooseCommand(this.o.config, role, process.env, (c) => this.preflightOf(c), holdMs);
    if (!choice) return null;
    if (choice.kind === 'unavailable') return { command: choice.command, unavailable: choice.reason };
    if (choice.kind === 'wait') {
      const message = `${choice.reason} (${ROLE_NAMES[role]})`;
      this.limitWaits.push({ epic_id: epicId, kind: 'limit', message, until: choice.until });
      this.logOnce(`limit:${epicId}:${message}`, `${epicId}: ${message}`);
      return null;
    }
    if (choice.instead)
      this.o.log(`${epicId}: ${ROLE_NAMES[role]} runs on ${limitKeyOf(choice.command)} (${choice.instead})`);
    return { command: choice.command, unavailable: null };
  }

  private async launch(a: RunAction): Promise<boolean> {
    const role = a.role as AgentRole;
    // A routed role picks its preset by outcomes (routedCommand.ts, skipping limited presets); otherwise the
    // role's first preset that is not limited, else its fallbacks (commandFor).
    const context = {
      store: this.o.store,
      config: this.o.config,
      actor: this.actor,
      unavailable: async (argv: readonly string[]) => {
        const until = limitedUntil(process.env, limitKeyOf(argv));
        return until ? `limited until ${clock(until)}` : this.preflightOf(argv);
      },
    };
    const routed = await routedCommand(context, role, a.epicId, a.stepAnchor);
    if (routed) this.o.log(`${a.epicId}: ${routed.choice.reason}`);
    const choice = routed ? { command: routed.command, unavailable: null } : await this.commandFor(a.epicId, role);
    if (!choice) return false;
    const { command, unavailable } = choice;
    if (unavailable) {
      // Nothing is claimed, counted or started: the epic waits for a person to install or log in and retry.
      await this.o.store.applyEpicEvent(
        a.epicId,
        'agent_unavailable',
        this.actor,
        unavailableReason(role, unavailable),
        { role, command, reason: unavailable },
      );
      this.o.log(
        `${a.epicId}: ${ROLE_NAMES[role]} cannot run — ${unavailable}; nothing is started for it until a person retries: springfield epic retry ${a.epicId}`,
      );
      return true;
    }
    // Ralph and Bart work in the epic's own worktree, which an epic started long ago may still need (docs/lifecycle.md).
    const planner = ROLE_REGISTRY[role].worktree === 'planning';
    const epic = planner ? await this.o.store.getEpic(a.epicId) : await this.work.epicPlace(a.epicId);
    await this.work.tidy(epic);
    let worktree = epic.worktree_path ?? this.o.mainRoot;
    let planningFailed: string | null = null;
    let planningRun = 0;
    // One planner per epic at a time: a second would remove the first one's worktree as stale.
    if (planner && this.planningOwner.has(a.epicId)) return false;
    if (planner) {
      // A planner works in a worktree of her own, removed when her run ends (docs/lifecycle.md).
      // Owned before the first await, so a second launch in the same pass sees it.
      planningRun = ++this.planningRuns;
      this.planningOwner.set(a.epicId, planningRun);
      try {
        const planning = await createPlanningWorktree(
          this.o.mainRoot,
          a.epicId,
          epic.status === 'blocked',
          this.o.worktreeLocation,
        );
        worktree = planning.path;
        this.o.log(`${a.epicId}: planning worktree ${planning.path} at ${planning.base}`);
        planningFailed = await this.work.setUpPlanning(a.epicId, worktree);
        if (planningFailed) await this.removeOwnPlanning(a.epicId, planningRun);
      } catch (err) {
        planningFailed = `cannot make the planning worktree: ${messageOf(err)}`;
        this.planningOwner.delete(a.epicId);
      }
    }
    if (a.newIteration && !(await this.o.store.countIteration(a.epicId, this.actor, a.reason))) {
      this.o.log(`${a.epicId}: build budget spent; blocked`);
      if (planningRun && !planningFailed) await this.removeOwnPlanning(a.epicId, planningRun);
      return true;
    }
    // The invariant, checked before anything is claimed or started: never a person's checkout, never another branch.
    const misplaced = planningFailed ? null : agentPlaceProblem(role, epic, worktree, this.o.mainRoot, process.env);
    if (misplaced) {
      this.logOnce(`place:${a.epicId}:${misplaced}`, `${a.epicId}: not starting ${ROLE_NAMES[role]}: ${misplaced}`);
      if (planningRun) await this.removeOwnPlanning(a.epicId, planningRun);
      return false;
    }
    const planPath = (await this.o.store.epicPlans(a.epicId)).livePlanPath;
    const env: Record<string, string> = {};
    let step = a.stepAnchor;
    let claimToken: number | null = null;
    const building = ROLE_REGISTRY[role].rule === 'building';
    if (building && a.stepAnchor) await this.files.beforeStep(a.epicId, a.stepAnchor, worktree);
    if (building && planPath) {
      const source = await this.work.builderPlan(epic, planPath, worktree);
      if (!source) return true;
      if (a.stepAnchor) {
        // The store's files rule is for agents that claim by themselves: decide() already applied the
        // scheduler's, which "filesAware": false turns off (docs/files.md).
        const claim = await this.o.store.claimNext(
          source,
          { worktree, agent: role },
          { leaseSeconds: this.o.config.leaseSeconds, files: false, anchor: a.stepAnchor },
        );
        if (!claim.claimed) return false;
        step = claim.step_anchor;
        claimToken = claim.claim_token;
        env.SPRINGFIELD_CLAIM_TOKEN = String(claim.claim_token);
      }
    }
    const launchId = randomUUID();
    env.SPRINGFIELD_AGENT = role;
    env.SPRINGFIELD_LAUNCH_ID = launchId;
    const argv = [
      ...this.o.cli,
      'run',
      '--role',
      role,
      '--epic',
      a.epicId,
      ...(step ? ['--step', step] : []),
      ...(planPath ? ['--plan', planPath] : []),
      '--timeout',
      String(timeoutFor(this.o.config, role)),
      '--',
      ...command,
    ];
    const name = [ROLE_NAMES[role], a.epicId, step].filter(Boolean).join(' · ');
    this.o.log(`start ${name} (${a.reason})`);
    let agent: LaunchedAgent;
    try {
      // A planning worktree that could not be made or set up is recorded as a failed Lisa run (a fault like any other).
      if (planningFailed) throw new Error(planningFailed);
      agent = this.o.launcher.launch({ argv, cwd: worktree, env, name, role, epicId: a.epicId, step });
    } catch (err) {
      // The last line is the reason the run is recorded with; lines before it (a setup's output) are its output.
      const lines = messageOf(err).split('\n');
      const message = [...lines.slice(0, -1), `cannot launch: ${lines.at(-1) ?? ''}`].join('\n');
      agent = { done: Promise.resolve(127), kill: () => undefined, tail: () => message };
    }
    const launch: Launch = {
      id: launchId,
      placeholder: {
        id: this.nextLocalId--,
        epicId: a.epicId,
        stepAnchor: step,
        role,
        startedAt: new Date().toISOString(),
      },
      role,
      planPath,
      worktree,
      claimToken,
      command,
      agent,
      exited: null,
    };
    this.launches.set(launchId, launch);
    this.agents.set(launchId, agent);
    const done = agent.done.then(async (code) => {
      this.o.log(`${name} exited ${code}`);
      if (planner && !planningFailed) await this.removeOwnPlanning(a.epicId, planningRun);
      launch.exited = code;
      this.endedUnseen = true;
      this.agents.delete(launchId);
      if (building) await this.files.afterBuild(a.epicId);
      const ended = await this.o.store.runsByLaunch([launchId]).catch(() => []);
      this.fleet.runEnded(ended[0]?.status ?? 'failed');
      this.pending.delete(done);
    });
    this.pending.add(done);
    return true;
  }

  /** Ralph's one session on a real conflict at the merge (docs/files.md): `springfield run` in the epic's worktree, the brief in his context. */
  private async conflictSession(epicId: string, worktree: string, brief: string): Promise<number> {
    const command = this.o.config.roles.ralph;
    if (!command) return 1;
    const argv = [...this.o.cli, 'run', '--role', 'ralph', '--epic', epicId];
    argv.push('--timeout', String(timeoutFor(this.o.config, 'ralph')), '--', ...command);
    const env = { SPRINGFIELD_AGENT: 'ralph', SPRINGFIELD_CONFLICT: brief };
    const name = `${ROLE_NAMES.ralph} · ${epicId} · merge conflict`;
    this.o.log(`start ${name}`);
    const agent = this.o.launcher.launch({ argv, cwd: worktree, env, name, role: 'ralph', epicId, step: null });
    const id = randomUUID();
    this.agents.set(id, agent);
    const code = await agent.done.finally(() => this.agents.delete(id));
    this.o.log(`${name} exited ${code}`);
    return code;
  }
}
