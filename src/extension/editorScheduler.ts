import { join } from 'node:path';
import * as vscode from 'vscode';
import {
  type ConflictAhead,
  configPathFor,
  DEFAULT_RUN_CONFIG,
  loadRoleCommands,
  Orchestrator,
  parseRunConfig,
  RefusedError,
  requireAllowed,
  type RoleLimit,
  roleLimits,
  type RunConfig,
  type Store,
  trustTargetFor,
} from '../core/index.ts';
import { AgentTerminalLauncher } from './agentTerminal.ts';
import { Disposable } from './lifecycle.ts';
import type { SchedulerState } from './model/needsYou.ts';
import type { SchedulerPass } from './model/schedulerReport.ts';
import type { StoreHost } from './storeHost.ts';
import { removeFromSourceControl } from './sourceControlWorktrees.ts';
import { confirmRepositoryConfig } from './trustPrompt.ts';
import { userSetting } from './userSettings.ts';
import { messageOf } from '../shared/errorMessage.ts';

/** Settings win over `.springfield/config.json`; both are validated the same way. */
export function runConfig(host: StoreHost): RunConfig {
  const fromFile = host.dbPath ? loadRoleCommands(configPathFor(host.dbPath)) : DEFAULT_RUN_CONFIG;
  const s = vscode.workspace.getConfiguration('springfield');
  const set = <T>(key: string): T | undefined => s.inspect<T>(key)?.workspaceValue ?? s.inspect<T>(key)?.globalValue;
  const roles = userSetting<Record<string, string[]>>('roles', {});
  const verification = userSetting<string[][]>('verification.commands', []);
  const setup = userSetting<string[][]>('worktrees.setup', []);
  const archive = userSetting<string[][]>('worktrees.archive', []);
  const timeouts = s.get<Record<string, number>>('timeouts', {});
  const { merge, ...file } = fromFile;
  return parseRunConfig(
    {
      ...file,
      ...(merge ? { merge } : {}),
      roles: Object.keys(roles).length ? roles : fromFile.roles,
      verification: verification.length ? verification : fromFile.verification,
      maxParallelAgents: set<number>('maxParallelAgents') ?? fromFile.maxParallelAgents,
      leaseSeconds: set<number>('leaseSeconds') ?? fromFile.leaseSeconds,
      timeouts: { ...fromFile.timeouts, ...timeouts },
      retryLimit: set<number>('retryLimit') ?? fromFile.retryLimit,
      retryBackoffSeconds: set<number[]>('retryBackoffSeconds') ?? fromFile.retryBackoffSeconds,
      setup: setup.length ? setup : fromFile.setup,
      archive: archive.length ? archive : fromFile.archive,
    },
    'settings (springfield.*)',
  );
}

/** The configured roles whose preset is limited on this host now (none when the config cannot be read). */
export function hostRoleLimits(host: StoreHost, now: Date = new Date()): RoleLimit[] {
  try {
    return roleLimits(runConfig(host), process.env, now);
  } catch {
    return [];
  }
}

/** The scheduler hosted by the extension: ticks on every store change and on a slow timer. */
export class EditorScheduler extends Disposable {
  private readonly output = this.register(vscode.window.createOutputChannel('Springfield scheduler'));
  private readonly runningChanged = this.register(new vscode.EventEmitter<boolean>());
  /** The loop started or stopped. */
  readonly onDidChangeRunning = this.runningChanged.event;
  private readonly passed = this.register(new vscode.EventEmitter<SchedulerPass>());
  /** A pass ended: what it did, and why it did not do more (docs/editor-scheduler.md). */
  readonly onDidPass = this.passed.event;
  private orchestrator: Orchestrator | undefined;
  /** The scheduler's own connection to the store (StoreHost.openAnother), closed with the scheduler. */
  private store: Store | undefined;
  private storeFor: string | undefined;
  private timer: NodeJS.Timeout | undefined;
  /** The passes under way, if any. */
  private ticking: Promise<void> | undefined;
  private again = false;
  /** The first agent after a Start shows its terminal. */
  private revealNext = false;
  private stale = false;
  private last: SchedulerPass | undefined;
  private readonly host: StoreHost;
  private readonly cliPath: string;
  private readonly launcher: AgentTerminalLauncher;

  constructor(host: StoreHost, extensionPath: string, binDir?: string) {
    super();
    this.host = host;
    this.cliPath = join(extensionPath, 'dist', 'cli.cjs');
    const reveal = (): boolean => {
      const first = this.revealNext;
      this.revealNext = false;
      return first;
    };
    this.launcher = new AgentTerminalLauncher({ host, binDir, reveal });
    this.register(host.onDidChange(() => void this.tick()));
    this.register({
      dispose: () => {
        this.stop();
        void this.store?.close();
        this.store = undefined;
      },
    });
  }

  /**
   * A line in the scheduler's output channel. A pass still in flight when the window reloads ends after
   * the channel was disposed, and VS Code throws "Channel has been closed" for any line written then.
   */
  private say(line: string): void {
    if (!this.isDisposed) this.output.appendLine(line);
  }

  get running(): boolean {
    return this.timer !== undefined;
  }

  /** The terminal of an epic's agent runs (the latest used), if one is open in this window. */
  terminalFor(epicId: string): vscode.Terminal | undefined {
    return this.launcher.terminalFor(epicId);
  }

  /**
   * What the loop's last pass found (nothing while it does not run here: a stale list would mislead).
   * Until its first pass ends it is busy: whether it waits for anyone is not known yet.
   */
  get state(): SchedulerState {
    const last = this.running ? this.last : undefined;
    return {
      running: this.running,
      busy: last?.busy ?? this.running,
      waiting: last?.waiting ?? [],
      unstaffed: last?.unstaffed ?? [],
      ...(this.running && this.orchestrator ? { parallel: this.orchestrator.parallel.text } : {}),
    };
  }

  /** The conflicts ahead its orchestrator predicted (docs/files.md); undefined while the loop does not run here. */
  get conflictsAhead(): ReadonlyMap<string, readonly ConflictAhead[]> | undefined {
    return this.running ? this.orchestrator?.conflictsAhead : undefined;
  }

  private create(): Orchestrator {
    if (!vscode.workspace.isTrusted)
      throw new Error(
        'the scheduler launches agents, which Restricted Mode does not allow; trust this workspace first',
      );
    const mainRoot = this.host.location?.mainRoot;
    if (!mainRoot || !this.host.location || !this.host.dbPath)
      throw new Error('the scheduler needs a repository with a main worktree');
    requireAllowed(trustTargetFor(this.host.location, this.host.dbPath, process.env));
    const log = (line: string) => this.say(`${new Date().toISOString().slice(11, 19)} ${line}`);
    const location = userSetting<string>('worktrees.location', '');
    // The scheduler writes through a connection of its own, which the window's watch sees write by write
    // (a merge's "done" shows when it is recorded, not when the job ends); it also says when it wrote.
    const wrote = () => void this.host.refresh();
    const where = this.host.databaseUrl ?? this.host.dbPath;
    if (this.store && this.storeFor !== where) void this.store.close();
    if (!this.store || this.storeFor !== where) this.store = this.host.openAnother();
    this.storeFor = where;
    return new Orchestrator({
      store: this.store,
      mainRoot,
      config: runConfig(this.host),
      cli: [process.execPath, this.cliPath],
      launcher: this.launcher,
      log,
      worktreeLocation: location || undefined,
      onWrite: wrote,
      beforeWorktreeRemoved: removeFromSourceControl,
    });
  }

  /** `asked`: a person asked for it (not the scheduler starting by itself at activation). */
  async start(asked = true): Promise<void> {
    if (this.timer) return;
    await confirmRepositoryConfig(this.host, asked);
    if (this.timer) return;
    this.orchestrator = this.create();
    this.stale = false;
    this.timer = setInterval(() => void this.tick(), 2000);
    this.say('scheduler started');
    this.revealNext = true;
    this.runningChanged.fire(true);
    void this.tick(true);
  }

  /**
   * Stops the loop. A pass under way still ends (what it launched keeps running); "stopped" is logged
   * once it has, so nothing starts after the log says the scheduler stopped.
   */
  stop(): void {
    if (!this.timer) return;
    clearInterval(this.timer);
    this.timer = undefined;
    this.last = undefined;
    this.revealNext = false;
    this.runningChanged.fire(false);
    const stopped = () => this.say('scheduler stopped (running agents keep going; their terminals stay open)');
    if (this.ticking) void this.ticking.then(stopped);
    else stopped();
  }

  /** The settings or config.json changed: the next pass runs with them (at once when nothing is under way). */
  reload(): void {
    this.stale = true;
  }

  /**
   * The orchestrator for the next pass: a new one when the configuration changed and the old one has
   * nothing under way (a changed config.json is confirmed first, as at Start).
   */
  private async current(asked: boolean): Promise<Orchestrator> {
    if (!this.orchestrator || (this.stale && this.orchestrator.idle)) {
      await confirmRepositoryConfig(this.host, asked);
      this.orchestrator = this.create();
      this.stale = false;
    }
    return this.orchestrator;
  }

  /** One pass, whether or not the loop runs. */
  async runOnce(): Promise<SchedulerPass> {
    await confirmRepositoryConfig(this.host, true);
    const pass = await this.pass(await this.current(true), 'once');
    await this.host.refresh();
    return pass;
  }

  /** One pass of `orchestrator`, told to whoever listens. */
  private async pass(orchestrator: Orchestrator, kind: SchedulerPass['kind']): Promise<SchedulerPass> {
    const actions = await orchestrator.tick();
    const pass: SchedulerPass = {
      kind,
      actions,
      waiting: orchestrator.waiting,
      unstaffed: orchestrator.unstaffed,
      busy: !orchestrator.idle,
      roles: orchestrator.configuredRoles,
      parallel: orchestrator.parallel.text,
    };
    this.last = pass;
    this.passed.fire(pass);
    return pass;
  }

  /** One pass at a time; a change that arrives during a pass gets a pass of its own right after, so no run's end waits for the timer. */
  private async tick(first = false): Promise<void> {
    if (!this.timer || !this.orchestrator) return;
    if (this.ticking) {
      this.again = true;
      return;
    }
    this.ticking = this.passes(first).finally(() => {
      this.ticking = undefined;
    });
    await this.ticking;
  }

  private async passes(first: boolean): Promise<void> {
    try {
      let kind: SchedulerPass['kind'] = first ? 'start' : 'loop';
      do {
        this.again = false;
        await this.pass(await this.current(false), kind);
        kind = 'loop';
      } while (this.again && this.timer);
    } catch (err) {
      if (err instanceof RefusedError && (err.code === 'config_not_allowed' || err.code === 'state_tracked')) {
        // The config changed while the loop ran and the person did not allow the new one: nothing it names may start.
        this.stop();
        void vscode.window.showWarningMessage(`Springfield scheduler stopped: ${err.message}`);
      } else {
        this.say(`tick failed: ${messageOf(err)}`);
      }
    }
  }
}
