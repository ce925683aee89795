import { existsSync, watch, type FSWatcher } from 'node:fs';
import { dirname } from 'node:path';
import * as vscode from 'vscode';
import {
  type Actor,
  type Complexity,
  configPathFor,
  ensureGitignored,
  hostId,
  loadRoleCommands,
  locateRepo,
  openStore,
  repositoryId,
  type RepoLocation,
  type Store,
} from '../core/index.ts';
import { Disposable } from './lifecycle.ts';
import type { EditorDatabase } from './model/databaseSetting.ts';
import { loadSnapshot, runningApps, sameApps, type Snapshot } from './model/snapshot.ts';
import { messageOf } from '../shared/errorMessage.ts';

export type HostState = 'noRepo' | 'empty' | 'ready' | 'error';

/**
 * The extension's one connection to the shared store. Notices writes by any process within a
 * fraction of a second through the store's own watch (docs/architecture.md): on SQLite, until the
 * file exists, a watch on the folder it will appear in, with a slow timer as a safety net; on
 * PostgreSQL (`springfield.databaseUrl`), LISTEN/NOTIFY, so writes from other hosts show too.
 */
export class StoreHost extends Disposable {
  private readonly changed = this.register(new vscode.EventEmitter<Snapshot>());
  readonly onDidChange = this.changed.event;
  private readonly stateChanged = this.register(new vscode.EventEmitter<HostState>());
  readonly onDidChangeState = this.stateChanged.event;
  state: HostState = 'noRepo';
  error: string | undefined;
  location: RepoLocation | undefined;
  snapshot: Snapshot | undefined;
  private store: Store | undefined;
  private watcher: FSWatcher | undefined;
  private timer: NodeJS.Timeout | undefined;
  private appsTimer: NodeJS.Timeout | undefined;
  private pending: NodeJS.Timeout | undefined;
  private loading: Promise<void> | undefined;
  private again = false;

  private readonly folder: string;
  private database: EditorDatabase | undefined;
  private watchedPath: string | undefined;

  constructor(folder: string, database?: EditorDatabase) {
    super();
    this.folder = folder;
    this.database = database;
    this.register({ dispose: () => this.stop() });
  }

  /** The actor for actions taken in this window: the person, in this worktree. */
  get actor(): Actor {
    return { worktree: this.location?.worktreeRoot ?? this.folder, agent: null };
  }

  get dbPath(): string | undefined {
    return this.location?.dbPath;
  }

  /** The PostgreSQL URL this window uses, if any (passed to the agents it starts; never shown). */
  get databaseUrl(): string | undefined {
    return this.database?.url;
  }

  async start(): Promise<void> {
    try {
      this.location = locateRepo(this.folder);
    } catch (err) {
      this.setState('noRepo', messageOf(err));
      return;
    }
    if (this.database?.problem) {
      this.setState('error', this.database.problem);
      return;
    }
    if (!this.database?.url) {
      this.watchFolder();
      this.timer = setInterval(() => this.poke(), 2000);
    }
    this.appsTimer = setInterval(() => this.checkApps(), 2000);
    await this.open();
  }

  /**
   * An epic's app is recorded beside its worktree, not in the store, so no write tells of one started
   * from a terminal or one that ended: the records are read every 2 s, and the snapshot reloaded when
   * the apps running differ from the snapshot's (docs/worktrees.md, "Running an epic's app").
   */
  private checkApps(): void {
    const s = this.snapshot;
    if (s && !this.loading && !sameApps(s.appsRunning, runningApps(s.epics))) void this.refresh();
  }

  /**
   * A connection of its own to this window's store, for the scheduler: its writes reach the watch
   * like another process's (PRAGMA data_version, LISTEN), so the views follow each at once instead of
   * when the scheduler's pass or job ends. The caller closes it.
   */
  openAnother(): Store {
    this.writable();
    if (!this.location) throw new Error('Springfield needs a folder inside a git repository');
    if (this.database?.url) {
      const cwd = this.location.worktreeRoot ?? this.folder;
      return openStore({
        location: this.database.url,
        repository: repositoryId(this.location.commonDir, cwd, process.env),
        host: hostId(process.env),
      });
    }
    return openStore({ location: this.location.dbPath, ifMissing: 'create' });
  }

  /** The store, opened for writing (created on first write, e.g. from the welcome view, which also ignores it in git). */
  writable(): Store {
    if (!this.location) throw new Error('Springfield needs a folder inside a git repository');
    if (!this.store && this.database?.url) {
      const cwd = this.location.worktreeRoot ?? this.folder;
      this.store = openStore({
        location: this.database.url,
        repository: repositoryId(this.location.commonDir, cwd, process.env),
        host: hostId(process.env),
      });
      this.store.watch(() => void this.refresh());
    }
    if (!this.store) {
      const creating = !existsSync(this.location.dbPath);
      this.store = openStore({ location: this.location.dbPath, ifMissing: 'create' });
      if (creating) ensureGitignored(this.location);
      // Closing the store ends its watch.
      this.store.watch(() => void this.refresh());
    }
    return this.store;
  }

  private async open(): Promise<void> {
    if (!this.location) return;
    if (!this.store && !this.database?.url && !existsSync(this.location.dbPath)) {
      this.setState('empty');
      return;
    }
    try {
      this.writable();
      await this.refresh();
    } catch (err) {
      this.setState('error', messageOf(err));
    }
  }

  /** Complexities the config says a person reviews (none when it cannot be read: its error shows where it is used). */
  private reviewedByPerson(): readonly Complexity[] {
    try {
      return this.dbPath ? (loadRoleCommands(configPathFor(this.dbPath)).reviewedByPerson ?? []) : [];
    } catch {
      return [];
    }
  }

  /** Reloads the snapshot now (after our own writes, or when another process wrote). */
  async refresh(): Promise<void> {
    if (this.loading) {
      this.again = true;
      return this.loading;
    }
    this.loading = (async () => {
      do {
        this.again = false;
        if (!this.store) return;
        this.snapshot = await loadSnapshot(this.store, this.actor.worktree, new Date(), this.reviewedByPerson());
        this.setState(this.snapshot.epics.length + this.snapshot.plans.length === 0 ? 'empty' : 'ready');
        this.changed.fire(this.snapshot);
      } while (this.again);
    })()
      .catch((err: unknown) => this.setState('error', messageOf(err)))
      .finally(() => {
        this.loading = undefined;
      });
    return this.loading;
  }

  private setState(state: HostState, error?: string): void {
    this.error = error;
    if (state === this.state) return;
    this.state = state;
    void vscode.commands.executeCommand('setContext', 'springfield.state', state);
    this.stateChanged.fire(state);
  }

  private watchFolder(): void {
    if (!this.location) return;
    const dir = dirname(this.location.dbPath);
    const target = existsSync(dir) ? dir : this.location.mainRoot;
    if (!target || this.watchedPath === target) return;
    this.watcher?.close();
    try {
      this.watcher = watch(target, () => this.schedule());
      this.watcher.on('error', () => undefined);
      this.watchedPath = target;
    } catch {
      this.watcher = undefined;
      this.watchedPath = undefined;
    }
  }

  private schedule(): void {
    if (this.pending) return;
    this.pending = setTimeout(() => {
      this.pending = undefined;
      this.poke();
    }, 40);
  }

  /** Opens the store once its database exists; from then on the store's watch reports writes. */
  private poke(): void {
    if (this.store) return;
    this.watchFolder();
    if (this.location && existsSync(this.location.dbPath)) void this.open();
  }

  /**
   * Switches to another database (springfield.databaseUrl changed, or arrived after activation, as
   * user settings can in a remote window): the old store is closed and the new one read from scratch.
   */
  async useDatabase(database: EditorDatabase): Promise<void> {
    if (database.url === this.database?.url && database.problem === this.database?.problem) return;
    this.database = database;
    this.stop();
    this.watcher = undefined;
    this.watchedPath = undefined;
    this.timer = undefined;
    await this.start();
  }

  private stop(): void {
    if (this.timer) clearInterval(this.timer);
    if (this.appsTimer) clearInterval(this.appsTimer);
    this.appsTimer = undefined;
    if (this.pending) clearTimeout(this.pending);
    this.watcher?.close();
    void this.store?.close();
    this.store = undefined;
  }
}
