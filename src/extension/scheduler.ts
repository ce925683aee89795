import { join } from 'node:path';
import * as vscode from 'vscode';
import type { LaunchedAgent, LaunchSpec, Launcher } from '../core/orchestrate/launcher.ts';
import { Orchestrator } from '../core/orchestrate/orchestrator.ts';
import { configPathFor, DEFAULT_RUN_CONFIG, loadRoleCommands, parseRunConfig, type RunConfig } from '../core/runs/roles.ts';
import { requireAllowed, trustTargetFor } from '../core/trust/trust.ts';
import { Disposable } from './lifecycle.ts';
import type { StoreHost } from './storeHost.ts';
import { confirmRepositoryConfig } from './trustPrompt.ts';
import { userSetting } from './userSettings.ts';

const ROLE_ICONS: Readonly<Record<string, string>> = { lisa: 'lightbulb', ralph: 'tools', bart: 'eye', lovejoy: 'git-merge' };

/** Each agent is an integrated terminal whose process is `springfield run …` (a real PTY) in the epic's worktree. */
export class TerminalLauncher implements Launcher {
  launch(spec: LaunchSpec): LaunchedAgent {
    const [shellPath, ...shellArgs] = spec.argv;
    const terminal = vscode.window.createTerminal({
      name: spec.name,
      cwd: spec.cwd,
      shellPath,
      shellArgs,
      // The CLI itself runs on the editor's runtime; `springfield run` strips this again for the agent.
      env: { ...spec.env, ELECTRON_RUN_AS_NODE: '1' },
      iconPath: new vscode.ThemeIcon(ROLE_ICONS[spec.role] ?? 'terminal'),
      isTransient: false,
    });
    // The store says when the run ended (the scheduler ticks on that write); this only tells when the
    // terminal's process is gone, which the editor reports as it closes the terminal.
    const done = new Promise<number>((resolve) => {
      const closed = vscode.window.onDidCloseTerminal((t) => {
        if (t !== terminal) return;
        closed.dispose();
        resolve(t.exitStatus?.code ?? 1);
      });
    });
    return { done, kill: () => terminal.sendText('\u0003', false) };
  }
}

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
  return parseRunConfig({
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
  }, 'settings (springfield.*)');
}

/** The scheduler hosted by the extension: ticks on every store change and on a slow timer. */
export class EditorScheduler extends Disposable {
  private readonly output = this.register(vscode.window.createOutputChannel('Springfield scheduler'));
  private orchestrator: Orchestrator | undefined;
  private timer: NodeJS.Timeout | undefined;
  private ticking = false;
  private again = false;
  private readonly host: StoreHost;
  private readonly cliPath: string;

  constructor(host: StoreHost, extensionPath: string) {
    super();
    this.host = host;
    this.cliPath = join(extensionPath, 'dist', 'cli.cjs');
    this.register(host.onDidChange(() => void this.tick()));
    this.register({ dispose: () => this.stop() });
  }

  get running(): boolean {
    return this.timer !== undefined;
  }

  private create(): Orchestrator {
    if (!vscode.workspace.isTrusted) throw new Error('the scheduler launches agents, which Restricted Mode does not allow; trust this workspace first');
    const mainRoot = this.host.location?.mainRoot;
    if (!mainRoot || !this.host.location || !this.host.dbPath) throw new Error('the scheduler needs a repository with a main worktree');
    requireAllowed(trustTargetFor(this.host.location, this.host.dbPath, process.env));
    const log = (line: string) => this.output.appendLine(`${new Date().toISOString().slice(11, 19)} ${line}`);
    const location = userSetting<string>('worktrees.location', '');
    // The scheduler writes through this window's own connection, which PRAGMA data_version does not count: it says when it wrote.
    const wrote = () => void this.host.refresh();
    return new Orchestrator({ store: this.host.writable(), mainRoot, config: runConfig(this.host), cli: [process.execPath, this.cliPath], launcher: new TerminalLauncher(), log, worktreeLocation: location || undefined, onWrite: wrote });
  }

  /** `asked`: a person asked for it (not the scheduler starting by itself at activation). */
  async start(asked = true): Promise<void> {
    if (this.timer) return;
    await confirmRepositoryConfig(this.host, asked);
    if (this.timer) return;
    this.orchestrator = this.create();
    this.timer = setInterval(() => void this.tick(), 2000);
    this.output.appendLine('scheduler started');
    void this.tick();
  }

  stop(): void {
    if (!this.timer) return;
    clearInterval(this.timer);
    this.timer = undefined;
    this.output.appendLine('scheduler stopped (running agents keep going; their terminals stay open)');
  }

  /** One pass, whether or not the loop runs. */
  async runOnce(): Promise<number> {
    await confirmRepositoryConfig(this.host, true);
    this.orchestrator ??= this.create();
    const actions = await this.orchestrator.tick();
    await this.host.refresh();
    return actions.length;
  }

  /** One pass at a time; a change that arrives during a pass gets a pass of its own right after, so no run's end waits for the timer. */
  private async tick(): Promise<void> {
    if (!this.timer || !this.orchestrator) return;
    if (this.ticking) {
      this.again = true;
      return;
    }
    this.ticking = true;
    try {
      do {
        this.again = false;
        await this.orchestrator.tick();
      } while (this.again && this.timer);
    } catch (err) {
      this.output.appendLine(`tick failed: ${err instanceof Error ? err.message : String(err)}`);
    } finally {
      this.ticking = false;
    }
  }
}
