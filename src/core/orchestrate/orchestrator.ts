import { chooseCommand, type TakenProbe } from './presetChoice.ts';
import { limitKeyOf } from '../limits/runLimit.ts';
import { randomUUID } from 'node:crypto';
import { preflight } from '../agents/preflight.ts';
import { ROLE_NAMES, type EpicStatus } from '../epics/transitions.ts';
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
import { PlanningRuns } from './planningRuns.ts';
import { routedCommand } from './routedCommand.ts';
import { schedulerConfigOf } from './schedulerConfig.ts';
import { mainChanges } from './merge.ts';
import { Fleet, type HeavyKind, type Parallel } from './fleet.ts';
import { Notifier } from './notify.ts';
import { messageOf } from '../../shared/errorMessage.ts';
import { BUILDING_ROLE, ROLE_REGISTRY } from '../../shared/roles.ts';
import { giveBackProbe } from '../limits/hostLimits.ts';

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

/** The status an epic must still have for a role's run to start, by the role's rule (docs/lifecycle.md). */
const RUNS_IN: Readonly<Record<string, EpicStatus>> = { building: 'in_progress', reviewing: 'implemented' };

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
  private readonly worktreeLocation: OrchestratorOptions['worktreeLocation'];
  private readonly store: OrchestratorOptions['store'];
  private readonly config: OrchestratorOptions['config'];
  private readonly mainRoot: OrchestratorOptions['mainRoot'];
  private readonly sameFailureLimit: OrchestratorOptions['sameFailureLimit'];
  private readonly onWrite: OrchestratorOptions['onWrite'];
  private readonly log: OrchestratorOptions['log'];
  private readonly cli: OrchestratorOptions['cli'];
  private readonly launcher: OrchestratorOptions['launcher'];
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
  /** The planners' own worktrees (docs/lifecycle.md). */
  private readonly planning: PlanningRuns;
  private runsSeen = new Map<number, RunSnapshot>();
  private waitingNow: Waiting[] = [];
  /** Launches this pass held back because every preset of the role is limited on this host. */
  private readonly limitWaits: Waiting[] = [];
  private unstaffedNow: Unstaffed[] = [];
  private readonly actor: Actor = { worktree: 'springfield-scheduler', agent: 'scheduler' };
  /** Each role command's preflight, once per scheduler's life while it passes (docs/scheduler-faults.md, "An agent that cannot run"). */
  private readonly preflights = new Map<string, Promise<string | null>>();
  /** Files-aware scheduling (docs/files.md): the steps' files, read each pass, and the conflicts ahead, predicted after each build. */
  private readonly files: FilesAware;
  /**
   * An agent or a piece of work this orchestrator started ended after the last pass read the store:
   * that pass could not act on it, so the orchestrator is not idle until the next one has looked.
   */
  private endedUnseen = false;
  /** Resolves nextExit() early: an epic was recorded merged while its merge's cleanup goes on (wake()). */
  private woken = wakeSignal();

  constructor(options: OrchestratorOptions) {
    // A location given here (a flag, an editor setting) wins over the config's worktreeRoot.
    this.worktreeLocation = options.worktreeLocation || options.config.worktreeRoot;
    this.store = options.store;
    this.config = options.config;
    this.mainRoot = options.mainRoot;
    this.sameFailureLimit = options.sameFailureLimit;
    this.onWrite = options.onWrite;
    this.log = options.log;
    this.cli = options.cli;
    this.launcher = options.launcher;
    this.planning = new PlanningRuns({
      store: options.store,
      mainRoot: options.mainRoot,
      worktreeLocation: this.worktreeLocation,
      log: options.log,
      setUp: (epicId, worktree) => this.work.setUpPlanning(epicId, worktree),
    });
    this.work = new EpicWork({
      store: options.store,
      mainRoot: options.mainRoot,
      config: options.config,
      log: options.log,
      worktreeLocation: this.worktreeLocation,
      actor: this.actor,
      resolveConflict: (epicId, worktree, brief) => this.conflictSession(epicId, worktree, brief),
      beforeWorktreeRemoved: options.beforeWorktreeRemoved,
      merged: () => this.wake(),
    });
    this.fleet = new Fleet(options.config, options.log);
    this.notifier = new Notifier(options.config.notify?.command ?? null, options.mainRoot, options.log);
    this.files = new FilesAware({
      store: options.store,
      mainRoot: options.mainRoot,
      config: options.config,
      log: options.log,
      logOnce: (key, line) => this.logOnce(key, line),
      resolving: async (epicId, worktree) => this.work.resolving(await this.store.getEpic(epicId), worktree),
    });
  }

  private get schedulerConfig(): SchedulerConfig {
    return schedulerConfigOf(this.config, this.mainRoot, this.sameFailureLimit, this.fleet.parallel.current);
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
    await this.planning.sweepOnce();
    await this.reconcileLaunches();
    this.endedUnseen = false;
    const stored = await this.files.annotate(await this.store.schedulerSnapshot());
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
      if (action.kind === 'merge' && this.config.merge !== 'pr' && !this.jobs.has(action.epicId) && !this.merging()) {
        const dirty = await mainChanges(this.mainRoot).catch(() => []);
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
    if (taken.length > 0) this.onWrite?.();
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
    return Object.entries(this.config.roles)
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

  /**
   * A promise that resolves when any launched agent or scheduler work ends (or ended unseen by the last
   * pass), or when a merge is recorded, before its worktree is archived and removed: epics its files
   * held go on at once (for --watch).
   */
  nextExit(): Promise<unknown> {
    // Work that ended while the last pass ran, after it read the store, is no longer in `pending`: look now.
    if (this.endedUnseen) return Promise.resolve();
    return Promise.race([...this.pending, this.woken.promise]);
  }

  /** The store changed under work still under way (an epic merged): the next pass should look now. */
  private wake(): void {
    this.endedUnseen = true;
    this.woken.resolve();
    this.woken = wakeSignal();
    this.onWrite?.();
  }

  /** Agents this orchestrator started that have not ended yet. */
  get activeAgents(): number {
    return this.agents.size;
  }

  stopAll(): void {
    for (const a of this.agents.values()) a.kill();
  }

  private logOnce(key: string, line: string): void {
    if (!this.surfaced.has(key)) this.log(line);
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
        const t = await this.store.applyEpicEvent(a.epicId, a.event, this.actor, a.reason, a.data ?? {});
        this.log(`${a.epicId}: ${t.from} → ${t.to} (${a.reason})`);
        if (a.event === 'agent_failed')
          this.log(
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
        this.log(`${epicId}: ${messageOf(err)}`);
      })
      .finally(() => {
        this.endedUnseen = true;
        this.jobs.delete(epicId);
        this.jobKinds.delete(epicId);
        this.pending.delete(job);
        this.onWrite?.();
      });
    this.jobs.set(epicId, job);
    this.jobKinds.set(epicId, kind);
    this.pending.add(job);
    return true;
  }

  /** Runs whose supervisor died: their agents' process groups are ended, then the runs are marked lost and release their steps. */
  private async reapOrphans(): Promise<void> {
    const orphans = await this.store.findOrphans(pidAlive);
    if (orphans.length === 0) return;
    for (const r of orphans) {
      if (r.agent_pid !== null && groupOfRun(r.agent_pid, r.id))
        await endGroup(r.agent_pid, this.config.killGraceSeconds * 1000);
    }
    const lost = await this.store.markOrphans(pidAlive, this.actor);
    for (const r of lost)
      this.log(
        `run #${r.id} (${r.role} ${r.epic_id ?? ''} ${r.step_anchor ?? ''}) is gone; marked lost — its step is released at once`,
      );
    await this.planning.removeLost(lost);
    if (lost.length > 0) this.onWrite?.();
  }

  /**
   * Launches whose run row has appeared are the store's from now on; a launch that ended without
   * ever recording a run (the CLI refused, could not start) is recorded as a failed run, so it counts
   * like any fault and its claim is released.
   */
  private async reconcileLaunches(): Promise<void> {
    if (this.launches.size === 0) return;
    const ended = [...this.launches.values()].filter((l) => l.exited !== null);
    const seen = new Set((await this.store.runsByLaunch([...this.launches.keys()])).map((r) => r.launch_id));
    for (const l of this.launches.values()) if (seen.has(l.id)) this.launches.delete(l.id);
    for (const l of ended) {
      if (seen.has(l.id)) continue;
      this.launches.delete(l.id);
      const tail = l.agent.tail?.() ?? '';
      const last = tail.trim().split('\n').at(-1)?.trim();
      const epicId = l.placeholder.epicId ?? '';
      const run = await this.store.recordFailedLaunch(
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
      this.log(
        `${epicId}: ${ROLE_NAMES[l.role]} never started (run #${run.id} recorded as failed: ${run.outcome_reason ?? ''})`,
      );
      this.onWrite?.();
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
      this.log(`stopping run #${runId}: ${reason}`);
    } else if (Date.now() - first > this.config.killGraceSeconds * 1000 + 5000) {
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
      check = preflight(command, env, this.mainRoot).then(
        (p) => p.reason,
        () => null,
      );
      this.preflights.set(key, check);
    }
    const reason = await check;
    if (reason !== null) this.preflights.delete(key);
    return reason;
  }

  /** How long a probe past a limit's reset is held at most: the run's timeout and its grace, and a minute. */
  private probeHoldMs(role: AgentRole): number {
    return (timeoutFor(this.config, role) + this.config.killGraceSeconds + 60) * 1000;
  }

  /**
   * The command to start for the role: its first preset that is not limited on this host and can run,
   * else its fallbacks in order (presetChoice.ts); null, with the wait recorded, while all are limited.
   */
  private async commandFor(
    epicId: string,
    role: AgentRole,
  ): Promise<{ command: readonly string[]; unavailable: string | null; probe: TakenProbe | null } | null> {
    const holdMs = this.probeHoldMs(role);
    const choice = await chooseCommand(this.config, role, process.env, (c) => this.preflightOf(c), holdMs);
    if (!choice) return null;
    if (choice.kind === 'unavailable') return { command: choice.command, unavailable: choice.reason, probe: null };
    if (choice.kind === 'wait') {
      const message = `${choice.reason} (${ROLE_NAMES[role]})`;
      this.limitWaits.push({ epic_id: epicId, kind: 'limit', message, until: choice.until });
      this.logOnce(`limit:${epicId}:${message}`, `${epicId}: ${message}`);
      return null;
    }
    if (choice.instead)
      this.log(`${epicId}: ${ROLE_NAMES[role]} runs on ${limitKeyOf(choice.command)} (${choice.instead})`);
    return { command: choice.command, unavailable: null, probe: choice.probe };
  }

  private async launch(a: RunAction): Promise<boolean> {
    const role = a.role as AgentRole;
    // A routed role picks its preset by outcomes (routedCommand.ts, skipping limited presets); otherwise the
    // role's first preset that is not limited, else its fallbacks (commandFor).
    const context = {
      store: this.store,
      config: this.config,
      actor: this.actor,
      unavailable: (argv: readonly string[]) => this.preflightOf(argv),
      env: process.env,
      holdMs: this.probeHoldMs(role),
    };
    const routed = await routedCommand(context, role, a.epicId, a.stepAnchor);
    if (routed) this.log(`${a.epicId}: ${routed.choice.reason}`);
    const choice = routed ? { ...routed, unavailable: null } : await this.commandFor(a.epicId, role);
    if (!choice) return false;
    // A probe taken past a limit's reset goes with the run; when no run starts it is given back at once,
    // and when the run ends without settling it (its agent never started), then (docs/agents.md, "Usage limits").
    const probe = choice.probe;
    const giveBack = (): void => {
      if (probe) giveBackProbe(process.env, probe.key, process.pid, probe.at);
    };
    let planning: Awaited<ReturnType<PlanningRuns['open']>> | null = null;
    const closePlanning = async (): Promise<void> => {
      if (planning) await this.planning.close(a.epicId, planning.run);
    };
    let handedOff = false;
    try {
      const { command, unavailable } = choice;
      if (unavailable) {
        // Nothing is claimed, counted or started: the epic waits for a person to install or log in and retry.
        await this.store.applyEpicEvent(
          a.epicId,
          'agent_unavailable',
          this.actor,
          unavailableReason(role, unavailable),
          {
            role,
            command,
            reason: unavailable,
          },
        );
        this.log(
          `${a.epicId}: ${ROLE_NAMES[role]} cannot run — ${unavailable}; nothing is started for it until a person retries: springfield epic retry ${a.epicId}`,
        );
        return true;
      }
      // Ralph and Bart work in the epic's own worktree, which an epic started long ago may still need (docs/lifecycle.md).
      const planner = ROLE_REGISTRY[role].worktree === 'planning';
      const epic = planner ? await this.store.getEpic(a.epicId) : await this.work.epicPlace(a.epicId);
      // The pass decided from what it read; the epic may have moved since (paused by the budget the run
      // that just ended spent, deferred by a person): Ralph builds only what is in progress, Bart reviews
      // only what is implemented.
      const wants = RUNS_IN[ROLE_REGISTRY[role].rule ?? ''];
      if (wants && epic.status !== wants) {
        this.log(`${a.epicId}: not starting ${ROLE_NAMES[role]}: it is ${epic.status.replace(/_/g, ' ')} now`);
        return false;
      }
      await this.work.tidy(epic);
      let worktree = epic.worktree_path ?? this.mainRoot;
      // One planner per epic at a time, in a worktree of her own, removed when her run ends.
      if (planner && this.planning.busy(a.epicId)) return false;
      planning = planner ? await this.planning.open(a.epicId, epic.status === 'blocked') : null;
      if (planning?.path) worktree = planning.path;
      const planningFailed = planning?.failed ?? null;
      if (a.newIteration && !(await this.store.countIteration(a.epicId, this.actor, a.reason))) {
        this.log(`${a.epicId}: build budget spent; blocked`);
        return true;
      }
      // The invariant, checked before anything is claimed or started: never a person's checkout, never another branch.
      const misplaced = planningFailed ? null : agentPlaceProblem(role, epic, worktree, this.mainRoot, process.env);
      if (misplaced) {
        this.logOnce(`place:${a.epicId}:${misplaced}`, `${a.epicId}: not starting ${ROLE_NAMES[role]}: ${misplaced}`);
        return false;
      }
      const planPath = (await this.store.epicPlans(a.epicId)).livePlanPath;
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
          const claim = await this.store.claimNext(
            source,
            { worktree, agent: role },
            { leaseSeconds: this.config.leaseSeconds, files: false, anchor: a.stepAnchor },
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
        ...this.cli,
        'run',
        '--role',
        role,
        '--epic',
        a.epicId,
        ...(step ? ['--step', step] : []),
        ...(planPath ? ['--plan', planPath] : []),
        '--timeout',
        String(timeoutFor(this.config, role)),
        '--',
        ...command,
      ];
      const name = [ROLE_NAMES[role], a.epicId, step].filter(Boolean).join(' · ');
      this.log(`start ${name} (${a.reason})`);
      let agent: LaunchedAgent;
      try {
        // A planning worktree that could not be made or set up is recorded as a failed Lisa run (a fault like any other).
        if (planningFailed) throw new Error(planningFailed);
        agent = this.launcher.launch({ argv, cwd: worktree, env, name, role, epicId: a.epicId, step });
      } catch (err) {
        // The last line is the reason the run is recorded with; lines before it (a setup's output) are its output.
        const lines = messageOf(err).split('\n');
        const message = [...lines.slice(0, -1), `cannot launch: ${lines.at(-1) ?? ''}`].join('\n');
        agent = { done: Promise.resolve(127), kill: () => undefined, tail: () => message };
      }
      // From here the run's end closes the planning worktree and gives the probe back if the run did not.
      handedOff = true;
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
        this.log(`${name} exited ${code}`);
        await closePlanning();
        launch.exited = code;
        this.endedUnseen = true;
        this.agents.delete(launchId);
        if (building) await this.files.afterBuild(a.epicId);
        giveBack();
        const ended = await this.store.runsByLaunch([launchId]).catch(() => []);
        this.fleet.runEnded(ended[0]?.status ?? 'failed');
        this.pending.delete(done);
      });
      this.pending.add(done);
      return true;
    } finally {
      // Nothing handed to a run (an early return, or a store error on the way): the planning worktree
      // and the probe go back at once, so neither waits for a run that never started.
      if (!handedOff) {
        giveBack();
        await closePlanning();
      }
    }
  }

  /** Ralph's one session on a real conflict at the merge (docs/files.md): `springfield run` in the epic's worktree, the brief in his context. */
  private async conflictSession(epicId: string, worktree: string, brief: string): Promise<number> {
    const command = this.config.roles.ralph;
    if (!command) return 1;
    const argv = [...this.cli, 'run', '--role', BUILDING_ROLE, '--epic', epicId];
    argv.push('--timeout', String(timeoutFor(this.config, BUILDING_ROLE)), '--', ...command);
    const env = { SPRINGFIELD_AGENT: BUILDING_ROLE, SPRINGFIELD_CONFLICT: brief };
    const name = `${ROLE_NAMES.ralph} · ${epicId} · merge conflict`;
    this.log(`start ${name}`);
    const agent = this.launcher.launch({ argv, cwd: worktree, env, name, role: BUILDING_ROLE, epicId, step: null });
    const id = randomUUID();
    this.agents.set(id, agent);
    const code = await agent.done.finally(() => this.agents.delete(id));
    this.log(`${name} exited ${code}`);
    return code;
  }
}

/** A promise and its resolve (Promise.withResolvers, which an older editor's Node may lack). */
function wakeSignal(): { promise: Promise<void>; resolve: () => void } {
  let resolve: () => void = () => undefined;
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}
