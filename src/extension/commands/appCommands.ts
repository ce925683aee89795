import { existsSync } from 'node:fs';
import { delimiter } from 'node:path';
import * as vscode from 'vscode';
import {
  configPathFor,
  type EpicRow,
  isEditorVariable,
  loadRoleCommands,
  RefusedError,
  runningApp,
  stopApp,
  UsageError,
} from '../../core/index.ts';
import { agentEnvironment } from '../model/databaseSetting.ts';
import { appTerminalName } from '../model/worktreeItems.ts';
import type { StoreHost } from '../storeHost.ts';
import { confirmRepositoryConfig } from '../trustPrompt.ts';

/** How long the `springfield app` process may take to say where the app listens before the editor stops waiting. */
const START_WAIT_MS = 30_000;

type AppRecord = NonNullable<ReturnType<typeof runningApp>>;

/**
 * An epic's app from the editor (docs/worktrees.md, "From the editor"): `springfield app <epic>` in a
 * terminal named for the epic, in its worktree, and a message with the app's address as a link,
 * forwarded by VS Code where the editor is remote.
 */
export class AppRunner {
  private readonly host: StoreHost;
  private readonly cliPath: string;
  private readonly binDir: string;

  constructor(host: StoreHost, cliPath: string, binDir: string) {
    this.host = host;
    this.cliPath = cliPath;
    this.binDir = binDir;
  }

  /** Starts the epic's app in `worktree` (or shows the one already running). */
  async run(epic: EpicRow, worktree: string): Promise<void> {
    const running = runningApp(worktree);
    if (running) {
      this.terminalOf(epic)?.show(true);
      return this.announce(epic, worktree, running, 'already runs');
    }
    if (!vscode.workspace.isTrusted)
      throw new Error(
        `running ${epic.id}'s app runs commands, which Restricted Mode does not allow; trust this workspace first`,
      );
    const dbPath = this.host.dbPath;
    if (!dbPath) throw new UsageError('no_worktree', 'running an app needs a Springfield repository');
    const configPath = configPathFor(dbPath);
    if (loadRoleCommands(configPath).run.length === 0) return this.noRunCommand(epic, configPath);
    try {
      await confirmRepositoryConfig(this.host, true);
    } catch (err) {
      if (err instanceof RefusedError && err.code === 'config_not_allowed') {
        throw new RefusedError(
          'config_not_allowed',
          `${epic.id}'s app did not start: ${configPath} is not allowed to run commands on this machine (allow it when asked, or with 'springfield allow')`,
        );
      }
      throw err;
    }
    const name = appTerminalName(epic);
    this.terminalOf(epic)?.dispose();
    const terminal = vscode.window.createTerminal({
      name,
      shellPath: process.execPath,
      shellArgs: [this.cliPath, 'app', epic.id],
      cwd: worktree,
      // The CLI runs on this editor's own runtime, without the editor's variables; the app's commands get the worktree's (core worktreeCommandEnv).
      env: agentEnvironment(process.env, isEditorVariable, {}, this.binDir, this.host.databaseUrl, delimiter, worktree),
      strictEnv: true,
      iconPath: new vscode.ThemeIcon('globe'),
      isTransient: true,
    });
    terminal.show(true);
    const app = await waitForApp(worktree, terminal);
    // The epic's row offers Stop app now (the snapshot reads which apps run).
    void this.host.refresh();
    if (app) return this.announce(epic, worktree, app, 'runs');
    void vscode.window.showWarningMessage(
      `Springfield: ${epic.id}'s app did not start: the terminal "${name}" says why.`,
    );
  }

  /** Stops the epic's app, wherever it was started (its terminal ends with it). */
  async stop(epic: EpicRow, worktree: string): Promise<void> {
    const grace = this.host.dbPath ? loadRoleCommands(configPathFor(this.host.dbPath)).killGraceSeconds : 5;
    const stopped = await stopApp(worktree, grace * 1000);
    void this.host.refresh();
    void vscode.window.showInformationMessage(
      stopped
        ? `Springfield: stopped ${epic.id}'s app (${epic.title}).`
        : `Springfield: ${epic.id} has no app running.`,
    );
  }

  /** Says where the app listens, as a link (port-forwarded where remote), with Open in browser and Stop app. */
  private async announce(epic: EpicRow, worktree: string, app: AppRecord, verb: string): Promise<void> {
    const external = app.url ? await vscode.env.asExternalUri(vscode.Uri.parse(app.url)) : undefined;
    const where =
      app.url && external
        ? ` at [${app.url}](${external.toString(true)})`
        : ' (its worktree has no ports: "ports" is 0 in config.json)';
    const text = `Springfield: ${epic.id}'s app (${epic.title}) ${verb}${where}, in the terminal "${appTerminalName(epic)}".`;
    const choice = await vscode.window.showInformationMessage(
      text,
      ...(external ? ['Open in browser'] : []),
      'Stop app',
    );
    if (choice === 'Open in browser' && external) await vscode.env.openExternal(external);
    else if (choice === 'Stop app' && existsSync(worktree)) await this.stop(epic, worktree);
  }

  private async noRunCommand(epic: EpicRow, configPath: string): Promise<void> {
    const exists = existsSync(configPath);
    const choice = await vscode.window.showWarningMessage(
      `Springfield: ${epic.id}'s app cannot start: ${configPath} has no "run" commands. Add e.g. "run": [["npm", "run", "dev"]], with "env": {"PORT": "$SPRINGFIELD_PORT"} if the app reads its port from PORT (docs/worktrees.md).`,
      ...(exists ? ['Open config.json'] : []),
    );
    if (choice === 'Open config.json') await vscode.window.showTextDocument(vscode.Uri.file(configPath));
  }

  private terminalOf(epic: EpicRow): vscode.Terminal | undefined {
    return vscode.window.terminals.find((t) => t.name === appTerminalName(epic) && t.exitStatus === undefined);
  }
}

/** Waits for `springfield app` to record the app (it does so before starting the commands); null if the terminal ended first or it took too long. */
async function waitForApp(worktree: string, terminal: vscode.Terminal): Promise<AppRecord | null> {
  for (
    const deadline = Date.now() + START_WAIT_MS;
    Date.now() < deadline;
    await new Promise((r) => setTimeout(r, 200))
  ) {
    const app = runningApp(worktree);
    if (app) return app;
    if (terminal.exitStatus !== undefined) return null;
  }
  return null;
}
