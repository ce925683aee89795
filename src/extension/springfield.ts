import { homedir } from 'node:os';
import { join } from 'node:path';
import * as vscode from 'vscode';
import { isEpicId } from '../shared/epicId.ts';
import { configureAgents } from './agents/configureAgents.ts';
import { registerLanguageModelTools } from './agents/languageModelTools.ts';
import { registerMcpServer } from './agents/mcpProvider.ts';
import { AgentSetup } from './agentSetup.ts';
import { installCliLink, uninstallCliLink, writeCliWrappers, type PathSetting } from './cliOnPath.ts';
import { onCheckboxes } from './commands/checkboxes.ts';
import type { CommandContext } from './commands/commandContext.ts';
import { BlockNotifier } from './blockNotifier.ts';
import { createEpic, deferEpic, resumeEpic, retryEpic, reviewPlan, startEpic } from './commands/epicCommands.ts';
import { initHere, newPlan, proposePlan } from './commands/planCommands.ts';
import { guarded } from './commands/guard.ts';
import { decide, openLocation, type SignalTarget } from './commands/signalCommands.ts';
import { WorktreeCommands } from './commands/worktreeCommands.ts';
import {
  claimNextStep,
  completeStep,
  heartbeatStep,
  openInPlan,
  openWorktree,
  reportClaim,
  resetStep,
  showTerminal,
  startEpicAndClaim,
  startStep,
} from './commands/stepCommands.ts';
import { Disposable } from './lifecycle.ts';
import { LiveClock, wakeTimes } from './liveClock.ts';
import { walkthroughProgress, type Snapshot } from './model/snapshot.ts';
import { ConflictWatch } from './model/conflictWatch.ts';
import { NeedsYouHost } from './needsYouHost.ts';
import { NeedsYouNotifier } from './needsYouNotifier.ts';
import { approveMerge, raiseBudget, runNeedsYouAction } from './commands/needsYouActions.ts';
import { ReviewChanges } from './review/reviewChanges.ts';
import { SignalComments } from './signalComments.ts';
import { EditorScheduler, hostRoleLimits, runConfig } from './editorScheduler.ts';
import { SchedulerNotices } from './schedulerNotices.ts';
import { SchedulerStatus } from './schedulerStatus.ts';
import { StatusBar } from './statusBar.ts';
import { epicLimitWaits } from './model/usageLimits.ts';
import { StoreHost } from './storeHost.ts';
import { databaseSetting, userSetting } from './userSettings.ts';
import { agentsRoot, epicsRoot, signalsRoot } from './views/treeModel.ts';
import type { TreeNode } from './views/nodes.ts';
import { NodeTreeProvider, type Row } from './views/treeProvider.ts';
import { ApprovalPanel } from './webviews/approvalPanel.ts';
import { DashboardPanel } from './webviews/dashboardPanel.ts';

const NO_AGENTS =
  'No agent is configured, so the scheduler starts nothing. Configure agents… (the gear above) picks the CLI that plays each role.';

interface Views {
  readonly epicsView: vscode.TreeView<Row>;
  readonly agentsView: vscode.TreeView<Row>;
}

/** The scheduler a window hosts and what hangs on it. */
interface Scheduling {
  readonly scheduler: EditorScheduler;
  readonly watch: ConflictWatch;
  readonly needs: NeedsYouHost;
  readonly setup: AgentSetup;
}

/** Wires the store host to the views, commands, comments, status bar and panels of one window. */
export class SpringfieldExtension extends Disposable {
  private readonly context: vscode.ExtensionContext;
  private needs: NeedsYouHost | undefined;
  private readonly epics = new NodeTreeProvider((s) => epicsRoot(s, this.needs?.current));
  private readonly signals = new NodeTreeProvider(signalsRoot);
  private readonly agents = new NodeTreeProvider(agentsRoot);
  private readonly approvals = new Map<string, ApprovalPanel>();
  private dashboard: DashboardPanel | undefined;
  private host: StoreHost | undefined;
  private ctx: CommandContext | undefined;
  private revealEpic: ((epicId: string) => void) | undefined;
  private scheduler: EditorScheduler | undefined;
  private epicsView: vscode.TreeView<Row> | undefined;
  private agentsView: vscode.TreeView<Row> | undefined;
  private conflicts: ConflictWatch | undefined;

  /** What tests and other extensions may read: the current snapshot and the rows each view would show. */
  readonly api = {
    snapshot: (): Snapshot | undefined => this.host?.snapshot,
    rows: (view: 'epics' | 'signals' | 'agents'): TreeNode[] => {
      const s = this.host?.snapshot;
      if (!s) return [];
      const walk = (nodes: readonly TreeNode[]): TreeNode[] => nodes.flatMap((n) => [n, ...walk(n.children?.() ?? [])]);
      return walk(
        view === 'epics' ? epicsRoot(s, this.needs?.current) : view === 'signals' ? signalsRoot(s) : agentsRoot(s),
      );
    },
    refresh: (): Promise<void> => this.host?.refresh() ?? Promise.resolve(),
    /** What waits for the person now (the Needs you list). */
    needsYou: () => this.needs?.current,
    /** Resolves once the first snapshot is loaded (activation does not wait for it). */
    ready: (): Promise<void> => this.started,
    /** How long activate() took, in milliseconds (measured by the extension itself). */
    activationMs: (): number => this.activationMs,
    /** The Epics tree provider, so benchmarks can time getChildren on a large epic. */
    epicsProvider: (): NodeTreeProvider => this.epics,
    /** Whether the scheduler loop runs in this window. */
    schedulerRunning: (): boolean => this.scheduler?.running ?? false,
    /** What the scheduler would run with, as the settings it honours say (user settings only for commands). */
    runSettings: () =>
      this.host && {
        config: runConfig(this.host),
        worktreeLocation: userSetting<string>('worktrees.location', ''),
        autoOrchestrate: userSetting<boolean>('autoOrchestrate', false),
      },
  };
  private activationMs = -1;
  private started: Promise<void> = Promise.resolve();

  constructor(context: vscode.ExtensionContext) {
    super();
    this.context = context;
  }

  async activate(): Promise<void> {
    const started = performance.now();
    // Offered in every window, a folder open or not.
    this.register(
      vscode.commands.registerCommand(
        'springfield.cli.installOnPath',
        guarded(() => this.installCliOnPath()),
      ),
    );
    this.register(
      vscode.commands.registerCommand(
        'springfield.cli.uninstallFromPath',
        guarded(() => this.uninstallCliFromPath()),
      ),
    );
    try {
      await this.activateInFolder();
    } finally {
      this.activationMs = performance.now() - started;
    }
  }

  /** One window's wiring, in four parts: the views, the scheduler, the snapshot's fan-out, the integrations. */
  private async activateInFolder(): Promise<void> {
    const folder = vscode.workspace.workspaceFolders?.[0];
    void vscode.commands.executeCommand('setContext', 'springfield.state', 'noRepo');
    if (!folder || folder.uri.scheme !== 'file') return;
    const host = this.register(new StoreHost(folder.uri.fsPath, databaseSetting()));
    this.host = host;
    const views = this.createViews();
    const scheduling = this.createScheduler(host, views);
    const ctx = this.createCommandContext(host, views.epicsView, scheduling);
    const comments = this.register(new SignalComments(() => host.location?.worktreeRoot ?? undefined));
    this.fanOutSnapshot(host, ctx, scheduling, comments);
    this.register(new SchedulerNotices(host, scheduling.scheduler, ctx));
    this.registerCommands(ctx, comments);
    this.register(views.epicsView.onDidChangeCheckboxState((e) => guarded(onCheckboxes)(ctx, e.items)));
    this.register(new WorktreeCommands(ctx, { cliPath: this.cliPath(), binDir: this.binDir() }));
    this.register(new ReviewChanges(ctx));
    this.registerIntegrations(host, scheduling.scheduler);
    // The views, commands and status bar are ready now; the first read of the store fills them in.
    // On the next macrotask: the store's calls are synchronous, so starting inline would still run inside activate().
    this.started = new Promise<void>((resolve) => setImmediate(resolve)).then(() => host.start());
    void this.started.then(() => {
      // Only the user's own settings can switch this on, never the repository's .vscode/settings.json.
      if (vscode.workspace.isTrusted && userSetting<boolean>('autoOrchestrate', false))
        void guarded(() => scheduling.scheduler.start(false))();
    });
  }

  /** The three trees: Epics (with Needs you at its top), Review signals and Agents. */
  private createViews(): Views {
    const epicsView = this.register(
      vscode.window.createTreeView('springfield.epics', {
        treeDataProvider: this.epics,
        showCollapseAll: true,
        manageCheckboxStateManually: true,
      }),
    );
    this.epicsView = epicsView;
    this.register(vscode.window.createTreeView('springfield.signals', { treeDataProvider: this.signals }));
    const agentsView = this.register(
      vscode.window.createTreeView('springfield.agents', { treeDataProvider: this.agents }),
    );
    this.agentsView = agentsView;
    return { epicsView, agentsView };
  }

  /** The scheduler this window hosts, what it forecasts and waits for, its agents' setup and its commands. */
  private createScheduler(host: StoreHost, views: Views): Scheduling {
    const scheduler = this.register(new EditorScheduler(host, this.context.extensionUri.fsPath, this.binDir()));
    this.scheduler = scheduler;
    // Conflicts ahead: the scheduler's forecast while it runs here, else test merges of the editor's own, throttled.
    const watch = new ConflictWatch({
      mainRoot: () => host.location?.mainRoot ?? null,
      forecast: () => scheduler.conflictsAhead,
      onChange: () => this.needs?.schedulerChanged(),
    });
    this.register({ dispose: () => watch.dispose() });
    this.conflicts = watch;
    const needs = this.register(
      new NeedsYouHost(
        views.epicsView,
        () => scheduler.state,
        () => watch.current,
      ),
    );
    this.needs = needs;
    const setup = this.register(new AgentSetup(host));
    this.setup = setup;
    // What the scheduler waits for joins Needs you after each pass, and leaves it when the scheduler stops.
    this.register(scheduler.onDidPass(() => needs.schedulerChanged()));
    this.register(
      scheduler.onDidChangeRunning(() => {
        // Started: its forecast is shown; stopped: the editor's own test merges take over.
        if (host.snapshot) watch.update(host.snapshot);
        needs.schedulerChanged();
      }),
    );
    const epicName = (id: string) => {
      const title = host.snapshot?.epics.find((e) => e.id === id)?.title;
      return title ? `“${title}”` : id;
    };
    this.register(new SchedulerStatus(scheduler, views.agentsView, epicName));
    this.register(
      setup.onDidChange(() => {
        scheduler.reload();
        void this.setWalkthroughKeys(host.snapshot);
        this.showAgentsHint(host.snapshot);
      }),
    );
    const commands: Record<string, () => unknown> = {
      'springfield.scheduler.start': () => scheduler.start(),
      'springfield.scheduler.stop': () => scheduler.stop(),
      'springfield.scheduler.runOnce': () => scheduler.runOnce(),
      'springfield.agents.configure': async () => {
        await configureAgents(host, this.context.extensionUri.fsPath);
        setup.check(true);
      },
    };
    for (const [id, fn] of Object.entries(commands)) this.register(vscode.commands.registerCommand(id, guarded(fn)));
    return { scheduler, watch, needs, setup };
  }

  /** What the commands, panels and notifications act through. */
  private createCommandContext(
    host: StoreHost,
    epicsView: vscode.TreeView<Row>,
    scheduling: Scheduling,
  ): CommandContext {
    const revealStep = (planPath: string, anchor: string) => {
      const epicId = host.snapshot?.plans.find((p) => p.plan_path === planPath)?.epic_id;
      const top = epicId ? `epic:${epicId}` : `plan:${planPath}`;
      const row = this.epics.materialise([top, `step:${planPath}#${anchor}`]);
      if (row)
        void epicsView.reveal(row, { expand: true, select: true, focus: false }).then(undefined, () => undefined);
    };
    this.revealEpic = (epicId: string) => {
      const row = this.epics.materialise([`epic:${epicId}`]);
      if (row) void epicsView.reveal(row, { expand: true, select: true, focus: true }).then(undefined, () => undefined);
    };
    const { scheduler, setup } = scheduling;
    const ctx: CommandContext = {
      host,
      epics: this.epics,
      signals: this.signals,
      openApproval: (id) => this.openApproval(id),
      openDashboard: () => this.openDashboard(),
      revealStep,
      scheduler: () => ({ running: scheduler.running, roles: setup.roles }),
      agentTerminal: (epicId) => scheduler.terminalFor(epicId),
    };
    this.ctx = ctx;
    return ctx;
  }

  /** Each new snapshot reaches every view, the status bar, the comments, the notifiers and the live clock. */
  private fanOutSnapshot(host: StoreHost, ctx: CommandContext, scheduling: Scheduling, comments: SignalComments): void {
    const { watch, needs } = scheduling;
    const status = this.register(new StatusBar((now) => hostRoleLimits(host, now)));
    const clock = this.register(new LiveClock([this.epics, this.agents, status], () => void host.refresh()));
    for (const tree of [this.epics, this.agents]) this.register(tree.onDidShowLiveRow(() => clock.wake()));
    const blocks = this.register(
      new BlockNotifier(
        this.context.workspaceState,
        (id) => guarded(retryEpic)(ctx, id),
        () => this.openDashboard(),
        (id) => guarded(raiseBudget)(ctx, id),
      ),
    );
    const told = this.register(
      new NeedsYouNotifier(
        this.context.workspaceState,
        (action) => void guarded(runNeedsYouAction)(ctx, action, (epicId) => this.revealEpic?.(epicId)),
      ),
    );
    this.register(
      host.onDidChange((s: Snapshot) => {
        watch.update(s);
        needs.update(s);
        this.epics.update(s);
        this.signals.update(s);
        this.agents.update(s);
        status.update(s);
        comments.update(s);
        clock.update(wakeTimes(s, hostRoleLimits(host)));
        void this.setWalkthroughKeys(s);
        blocks.update(s);
        told.update(needs.current);
        this.showAgentsHint(s);
      }),
    );
    this.register(
      needs.onDidChange(() => {
        if (host.snapshot) this.epics.update(host.snapshot);
        this.dashboard?.refresh();
        told.update(needs.current);
      }),
    );
  }

  /** What reaches beyond the views: language-model tools, the MCP server, settings, panels after a reload, terminals' PATH. */
  private registerIntegrations(host: StoreHost, scheduler: EditorScheduler): void {
    for (const tool of registerLanguageModelTools(host)) this.register(tool);
    this.register(registerMcpServer(this.context.extensionUri.fsPath, () => host.databaseUrl));
    // A changed database (or user settings that arrive after activation) takes effect at once; the scheduler follows when idle.
    this.register(
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (!e.affectsConfiguration('springfield.databaseUrl')) return;
        scheduler.reload();
        void host.useDatabase(databaseSetting());
      }),
    );
    this.registerSerializers();
    this.exposeCli();
  }

  /** A list of past runs hides the Agents view's welcome, so the hint about a missing agent goes above it. */
  private showAgentsHint(s: Snapshot | undefined): void {
    if (!this.agentsView) return;
    this.agentsView.message = s && s.runs.length > 0 && !this.setup?.configured ? NO_AGENTS : undefined;
  }

  private readonly walkthroughKeys = new Map<string, boolean>();
  private setup: AgentSetup | undefined;

  /** Ticks the Get started steps already done, in this repository, whoever did them. */
  private async setWalkthroughKeys(s: Snapshot | undefined): Promise<void> {
    const progress = s
      ? { ...walkthroughProgress(s), agents: this.setup?.configured ?? false }
      : {
          epic: false,
          proposed: false,
          approved: false,
          started: false,
          loosePlan: false,
          agents: false,
          agentsRan: false,
        };
    for (const [key, value] of Object.entries(progress)) {
      if (this.walkthroughKeys.get(key) === value) continue;
      this.walkthroughKeys.set(key, value);
      await vscode.commands.executeCommand('setContext', `springfield.walkthrough.${key}`, value);
    }
  }

  /**
   * VS Code ticks a walkthrough step when its context key turns true while the walkthrough is
   * loaded, not when it was true before; so the keys go false, the walkthrough opens, and they are set again.
   */
  private async openWalkthrough(): Promise<void> {
    await this.setWalkthroughKeys(undefined);
    await vscode.commands.executeCommand(
      'workbench.action.openWalkthrough',
      `${this.context.extension.id}#springfield.start`,
      false,
    );
    await this.setWalkthroughKeys(this.host?.snapshot);
  }

  private registerCommands(ctx: CommandContext, comments: SignalComments): void {
    const threadSignal = (t: vscode.CommentThread) => comments.signalIdOf(t);
    const commands: Record<string, (...args: never[]) => unknown> = {
      'springfield.claimNextStep': () => claimNextStep(ctx),
      'springfield.refresh': () => ctx.host.refresh(),
      'springfield.openDashboard': () => this.openDashboard(),
      'springfield.init': () => initHere(ctx),
      'springfield.walkthrough': () => this.openWalkthrough(),
      'springfield.epic.create': () => createEpic(ctx),
      'springfield.plan.new': (row?: Row) => newPlan(ctx, row),
      'springfield.epic.reviewPlan': (row?: Row) => reviewPlan(ctx, row),
      'springfield.epic.proposePlan': (row?: Row) => proposePlan(ctx, row),
      'springfield.epic.start': (row?: Row) => startEpic(ctx, row),
      'springfield.epic.startAndClaim': (row?: Row) => startEpic(ctx, row, true),
      'springfield.epic.defer': (row?: Row) => deferEpic(ctx, row),
      'springfield.epic.resume': (row?: Row) => resumeEpic(ctx, row),
      'springfield.epic.retry': (row?: Row) => retryEpic(ctx, row),
      'springfield.step.start': (row?: Row) => startStep(ctx, row),
      'springfield.step.complete': (row?: Row) => completeStep(ctx, row),
      'springfield.step.reset': (row?: Row) => resetStep(ctx, row),
      'springfield.step.heartbeat': (row?: Row) => heartbeatStep(ctx, row),
      'springfield.step.openInPlan': (row?: Row) => openInPlan(ctx, row),
      'springfield.step.openWorktree': (row?: Row) => openWorktree(ctx, row),
      'springfield.step.showTerminal': (row?: Row) => showTerminal(ctx, row),
      'springfield.signal.sendBack': (t?: SignalTarget) => decide(ctx, t, 'send_back', threadSignal),
      'springfield.signal.escalate': (t?: SignalTarget) => decide(ctx, t, 'escalate', threadSignal),
      'springfield.signal.accept': (t?: SignalTarget) => decide(ctx, t, 'accept', threadSignal),
      // The same decisions without icons, so a comment thread's title shows them as words.
      'springfield.signal.thread.sendBack': (t?: SignalTarget) => decide(ctx, t, 'send_back', threadSignal),
      'springfield.signal.thread.escalate': (t?: SignalTarget) => decide(ctx, t, 'escalate', threadSignal),
      'springfield.signal.thread.accept': (t?: SignalTarget) => decide(ctx, t, 'accept', threadSignal),
      'springfield.signal.open': (row?: Row) => openLocation(ctx, row),
      'springfield.epic.approveMerge': (row?: Row) => approveMerge(ctx, row),
      'springfield.needsYou.act': (row?: Row | string) =>
        this.actOnNeed(ctx, typeof row === 'string' ? row : ctx.epics.node(row ?? { id: '' })?.ref.needsKey),
      'springfield.needsYou.show': () => this.showNeeds(),
    };
    for (const [id, fn] of Object.entries(commands))
      this.register(vscode.commands.registerCommand(id, guarded(fn as (...a: unknown[]) => unknown)));
  }

  /** Runs what the Needs you item `key` offers, if it still needs the person. */
  private async actOnNeed(ctx: CommandContext, key: string | undefined): Promise<void> {
    const item = this.needs?.current.items.find((i) => i.key === key);
    if (!item) {
      void vscode.window.setStatusBarMessage('Springfield: that no longer needs you', 3000);
      return;
    }
    await runNeedsYouAction(ctx, item.action, (epicId) => this.revealEpic?.(epicId));
  }

  /** The status bar's count: shows the Needs you row, expanded, at the top of the Epics view. */
  private async showNeeds(): Promise<void> {
    await vscode.commands.executeCommand('springfield.epics.focus');
    const row = this.epics.materialise(['needs']);
    if (row)
      await this.epicsView?.reveal(row, { expand: true, select: true, focus: true }).then(undefined, () => undefined);
  }

  private openApproval(epicId: string): void {
    const existing = this.approvals.get(epicId);
    if (existing) return existing.reveal();
    const panel = vscode.window.createWebviewPanel(
      ApprovalPanel.viewType,
      `Plan · ${epicId}`,
      vscode.ViewColumn.Active,
      { retainContextWhenHidden: false },
    );
    this.adoptApproval(panel, epicId);
  }

  private adoptApproval(panel: vscode.WebviewPanel, epicId: string): void {
    if (!this.host) return;
    const ctx = this.ctx;
    const view = new ApprovalPanel(panel, this.context.extensionUri, this.host, epicId, async (id, claim) => {
      if (!ctx) return [];
      const { lines, openIn } = await startEpicAndClaim(ctx, id, claim);
      if (openIn) void reportClaim(lines.join(' '), openIn);
      return lines;
    });
    this.approvals.set(epicId, view);
    this.register({ dispose: () => view.dispose() });
    panel.onDidDispose(() => this.approvals.delete(epicId));
  }

  private openDashboard(): void {
    if (this.dashboard) return this.dashboard.reveal();
    const panel = vscode.window.createWebviewPanel(
      DashboardPanel.viewType,
      'Springfield',
      vscode.ViewColumn.Active,
      {},
    );
    this.adoptDashboard(panel);
  }

  private adoptDashboard(panel: vscode.WebviewPanel): void {
    if (!this.host || !this.ctx) return;
    const host = this.host;
    const ctx = this.ctx;
    const view = new DashboardPanel(panel, this.context.extensionUri, host, {
      openStep: (planPath, anchor) => {
        ctx.revealStep?.(planPath, anchor);
        void guarded(openInPlan)(
          ctx,
          this.epics.rowFor(`step:${planPath}#${anchor}`) ?? { id: `step:${planPath}#${anchor}` },
        );
      },
      openEpic: (epicId, target) =>
        void guarded(async () => {
          if (target === 'tree') return this.revealEpic?.(epicId);
          if (host.snapshot?.awaitingApproval.has(epicId)) return this.openApproval(epicId);
          const plan = host.snapshot?.plans.find((p) => p.epic_id === epicId);
          if (plan)
            await vscode.window.showTextDocument(vscode.Uri.file(join(host.actor.worktree, plan.plan_path)), {
              viewColumn: vscode.ViewColumn.Beside,
            });
          else this.openApproval(epicId);
        })(),
      retryEpic: (epicId) => guarded(retryEpic)(ctx, epicId),
      needsYou: () => this.needs?.current,
      limitWaits: () =>
        epicLimitWaits(
          host.snapshot?.epics ?? [],
          this.scheduler?.running ? this.scheduler.state.waiting : undefined,
          hostRoleLimits(host),
          new Date(),
        ),
      conflictsAhead: () => this.conflicts?.current ?? new Map(),
      actOnNeed: (key) => guarded(() => this.actOnNeed(ctx, key))(),
    });
    this.dashboard = view;
    this.register({ dispose: () => view.dispose() });
    panel.onDidDispose(() => (this.dashboard = undefined));
  }

  /** Panels come back after a window reload. */
  private registerSerializers(): void {
    this.register(
      vscode.window.registerWebviewPanelSerializer(DashboardPanel.viewType, {
        deserializeWebviewPanel: async (panel) => this.adoptDashboard(panel),
      }),
    );
    this.register(
      vscode.window.registerWebviewPanelSerializer(ApprovalPanel.viewType, {
        deserializeWebviewPanel: async (panel, state: unknown) => {
          const epicId =
            typeof state === 'object' && state !== null && typeof (state as { epicId?: unknown }).epicId === 'string'
              ? (state as { epicId: string }).epicId
              : undefined;
          if (epicId && isEpicId(epicId)) this.adoptApproval(panel, epicId);
          else panel.dispose();
        },
      }),
    );
  }

  /** Where the `springfield` wrapper for terminals and agents lives. */
  private binDir(): string {
    return join(this.context.globalStorageUri.fsPath, 'bin');
  }

  /** The CLI this extension ships, run by the wrappers. */
  private cliPath(): string {
    return join(this.context.extensionUri.fsPath, 'dist', 'cli.cjs');
  }

  /** Terminals opened by the editor get `springfield` on PATH, run by this extension host's own runtime. */
  private exposeCli(): void {
    const bin = this.binDir();
    try {
      writeCliWrappers(bin, process.execPath, this.cliPath());
      this.context.environmentVariableCollection.description = 'Puts the springfield CLI on PATH';
      this.context.environmentVariableCollection.prepend('PATH', `${bin}${process.platform === 'win32' ? ';' : ':'}`);
    } catch {
      // a read-only or unsafe storage folder only costs the PATH convenience
    }
  }

  /** Where the wrapper is (written afresh when `write`) and the PATH and home the user's shells have. */
  private pathSetting(write: boolean): PathSetting {
    const wrapper = write
      ? writeCliWrappers(this.binDir(), process.execPath, this.cliPath())
      : join(this.binDir(), 'springfield');
    return { wrapper, home: homedir(), path: process.env.PATH };
  }

  /** "Install 'springfield' command in PATH": links the wrapper into ~/.local/bin (cliOnPath.ts). */
  private installCliOnPath(): void {
    const result = installCliLink(this.pathSetting(true));
    const show = result.onPath ? vscode.window.showInformationMessage : vscode.window.showWarningMessage;
    void show(`Springfield: ${result.message}`);
  }

  /** "Uninstall 'springfield' command from PATH": removes this editor's link, and nothing else. */
  private uninstallCliFromPath(): void {
    const result = uninstallCliLink(this.pathSetting(false));
    void vscode.window.showInformationMessage(`Springfield: ${result.message}`);
  }
}
