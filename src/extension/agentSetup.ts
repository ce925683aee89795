import { statSync } from 'node:fs';
import { dirname } from 'node:path';
import * as vscode from 'vscode';
import { configPathFor } from '../core/index.ts';
import { Disposable } from './lifecycle.ts';
import { runConfig } from './editorScheduler.ts';
import type { StoreHost } from './storeHost.ts';

/**
 * Which roles have an agent configured (settings over `.springfield/config.json`), kept current as
 * either changes: the `springfield.agentsConfigured` context key (the Agents view's welcome), and an
 * event on every change of either for the walkthrough and the scheduler.
 */
export class AgentSetup extends Disposable {
  private readonly changed = this.register(new vscode.EventEmitter<readonly string[]>());
  readonly onDidChange = this.changed.event;
  private readonly host: StoreHost;
  private current: string[] | undefined;
  private fileKey = '';
  private watching: string | undefined;

  constructor(host: StoreHost) {
    super();
    this.host = host;
    this.register(
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (e.affectsConfiguration('springfield')) this.check(true);
      }),
    );
    this.register(host.onDidChangeState(() => this.check(false)));
    this.register(host.onDidChange(() => this.check(false)));
    this.check(true);
  }

  /** Roles with an agent command (lisa, ralph, bart…); empty when none is configured. */
  get roles(): readonly string[] {
    return this.current ?? [];
  }

  get configured(): boolean {
    return this.roles.length > 0;
  }

  /** Reads the configuration again when forced, or when config.json changed on disk since the last look. */
  check(force: boolean): void {
    const dbPath = this.host.dbPath;
    if (dbPath) this.watch(configPathFor(dbPath));
    const key = dbPath ? fileKey(configPathFor(dbPath)) : '';
    if (!force && key === this.fileKey && this.current !== undefined) return;
    this.fileKey = key;
    let roles: string[];
    try {
      roles = Object.entries(runConfig(this.host).roles)
        .filter(([, c]) => (c?.length ?? 0) > 0)
        .map(([r]) => r);
    } catch {
      // An invalid config.json starts nothing; the scheduler says why when asked to run.
      roles = [];
    }
    const rolesChanged = !this.current || roles.join() !== this.current.join();
    this.current = roles;
    if (rolesChanged)
      void vscode.commands.executeCommand('setContext', 'springfield.agentsConfigured', roles.length > 0);
    // Any change counts, not only the roles': the scheduler picks up new verification commands too.
    this.changed.fire(roles);
  }

  private watch(path: string): void {
    if (this.watching === path) return;
    this.watching = path;
    const watcher = this.register(
      vscode.workspace.createFileSystemWatcher(
        new vscode.RelativePattern(vscode.Uri.file(dirname(path)), 'config.json'),
      ),
    );
    for (const on of [watcher.onDidCreate, watcher.onDidChange, watcher.onDidDelete])
      this.register(on(() => this.check(false)));
  }
}

/** Changes when the file is written, created or removed. */
function fileKey(path: string): string {
  try {
    const s = statSync(path);
    return `${s.mtimeMs}:${s.size}`;
  } catch {
    return 'none';
  }
}
