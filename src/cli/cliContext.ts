import { existsSync, realpathSync } from 'node:fs';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import {
  type Actor,
  ensureGitignored,
  hostId,
  isDatabaseUrl,
  planFileSource,
  locateRepo,
  repositoryId,
  type PlanSource,
  type RepoLocation,
  type StepStore,
  type Store,
  type StoreSettings,
  UsageError,
} from '../core/index.ts';
import { int, str, wholeNumber, type ParsedArgs } from './args.ts';

/** How the CLI opens its store: openStore (the whole Store), or openStepStore in the step commands' bundle. */
export type OpenStore<S extends StepStore> = (settings: StoreSettings) => S;

/**
 * What a command needs from its surroundings, resolved lazily so bad input fails before any I/O.
 * `S` is the store its commands get: the step commands ask only for a StepStore (docs/cli-cost.md, "The step store").
 */
export class CliContext<S extends StepStore = Store> {
  readonly cwd: string;
  readonly env: NodeJS.ProcessEnv;
  readonly args: ParsedArgs;
  private readonly openStore: OpenStore<S>;
  /** Writes a line to stderr at once, while the command still works (what a long check is doing). */
  readonly progress: (line: string) => void;
  private repo: RepoLocation | undefined;
  private opened: S | undefined;
  private openedToCreate = false;
  private openedReadOnly = false;
  /** Whether creating the database added `.springfield/` to the main worktree's .gitignore. */
  gitignoreAdded = false;
  /** Lines for stderr (as a result's warnings), printed whether the command succeeds or fails. */
  readonly warnings: string[] = [];

  constructor(
    cwd: string,
    env: NodeJS.ProcessEnv,
    args: ParsedArgs,
    openStore: OpenStore<S>,
    stderr: (text: string) => void,
  ) {
    this.cwd = cwd;
    this.env = env;
    this.args = args;
    this.openStore = openStore;
    this.progress = (line) => stderr(`springfield: ${line}\n`);
  }

  get location(): RepoLocation {
    this.repo ??= locateRepo(this.cwd, this.env);
    return this.repo;
  }

  /**
   * The database: --db (a file or a postgres:// URL), then SPRINGFIELD_DATABASE_URL, then SPRINGFIELD_DB,
   * then the repository's shared file (docs/postgres.md, "Choosing the backend").
   */
  get dbPath(): string {
    const flagged = str(this.args, 'db');
    if (isDatabaseUrl(flagged)) return flagged;
    if (flagged) return resolve(this.cwd, flagged);
    if (isDatabaseUrl(this.env.SPRINGFIELD_DATABASE_URL)) return this.env.SPRINGFIELD_DATABASE_URL;
    if (isDatabaseUrl(this.env.SPRINGFIELD_DB)) return this.env.SPRINGFIELD_DB;
    if (this.env.SPRINGFIELD_DB) return resolve(this.cwd, this.env.SPRINGFIELD_DB);
    return this.location.dbPath;
  }

  /**
   * What the repository's own files (config.json, prompts/, context/, logs/) sit beside: the SQLite
   * database, or on PostgreSQL the file this repository would use (its `.springfield/` folder).
   */
  get stateFile(): string {
    if (!isDatabaseUrl(this.dbPath)) return this.dbPath;
    const { mainRoot, commonDir } = this.location;
    return mainRoot ? join(mainRoot, '.springfield', 'state.db') : join(commonDir, 'springfield', 'state.db');
  }

  /**
   * Opens the store for plans, steps and claims. Only commands that bring state into being
   * (`create`) make a missing database; every other command sees an empty one, so a refused
   * command never leaves a file behind. `read` opens read-only, so a database the user may not
   * write can still be shown. An open store is reused when it allows `mode`.
   */
  store(mode: 'create' | 'write' | 'read'): S {
    if (this.opened && ((mode === 'create' && !this.openedToCreate) || (mode !== 'read' && this.openedReadOnly)))
      this.closeStore();
    if (!this.opened && isDatabaseUrl(this.dbPath)) {
      this.opened = this.ownStore();
      this.openedToCreate = true;
      this.openedReadOnly = false;
    }
    if (!this.opened) {
      const creating = mode === 'create' && !existsSync(this.dbPath);
      this.opened = this.openStore({
        location: this.dbPath,
        ifMissing: mode === 'create' ? 'create' : 'empty',
        readOnly: mode === 'read',
      });
      this.openedToCreate = mode === 'create';
      this.openedReadOnly = mode === 'read';
      const overridden = str(this.args, 'db') !== undefined || Boolean(this.env.SPRINGFIELD_DB);
      if (creating && !overridden) this.gitignoreAdded = ensureGitignored(this.location);
    }
    return this.opened;
  }

  /**
   * A store of the caller's own, to close when done (the MCP tools open one per call): the shared
   * server for a URL, with this repository's id and this host; else the SQLite file, never created.
   */
  ownStore(): S {
    if (!isDatabaseUrl(this.dbPath)) return this.openStore({ location: this.dbPath, ifMissing: 'empty' });
    const cwd = this.location.worktreeRoot ?? this.cwd;
    const connectRetryMs = connectTimeoutMs(this.env);
    return this.openStore({
      location: this.dbPath,
      repository: repositoryId(this.location.commonDir, cwd, this.env),
      host: hostId(this.env),
      ...(connectRetryMs !== undefined ? { connectRetryMs } : {}),
    });
  }

  private closeStore(): void {
    void this.opened?.close();
    this.opened = undefined;
  }

  /** The worktree this process acts for: --worktree, else the current worktree's root. */
  get worktree(): string {
    const given = str(this.args, 'worktree');
    if (given) {
      const abs = resolve(this.cwd, given);
      return existsSync(abs) ? realpathSync.native(abs) : abs;
    }
    const root = this.location.worktreeRoot;
    if (!root)
      throw new UsageError('no_worktree', 'not inside a worktree (a bare repository has none): pass --worktree PATH');
    return root;
  }

  get actor(): Actor {
    const agent = str(this.args, 'agent') ?? (this.env.SPRINGFIELD_AGENT || null);
    return { worktree: this.worktree, agent, token: this.token };
  }

  private get token(): number | null {
    const flagged = int(this.args, 'token');
    if (flagged !== undefined) return flagged;
    const env = this.env.SPRINGFIELD_CLAIM_TOKEN;
    if (env === undefined || env === '') return null;
    return wholeNumber(env, 'SPRINGFIELD_CLAIM_TOKEN', 'bad_token');
  }

  /** The plan's key in the store: its path relative to the worktree root, with forward slashes. */
  planKey(pathArg: string): string {
    const abs = resolve(this.cwd, pathArg);
    const root = this.location.worktreeRoot ?? this.cwd;
    const real = existsSync(abs) ? realpathSync.native(abs) : abs;
    const rel = relative(root, real);
    if (rel === '' || rel.startsWith('..') || isAbsolute(rel)) {
      throw new UsageError('plan_outside_worktree', `${pathArg}: plan must be a file inside the worktree ${root}`);
    }
    return rel.split(sep).join('/');
  }

  /** Reads and parses the plan file in this worktree (refusing malformed plans before any write). */
  planSource(pathArg: string): PlanSource {
    const source = this.currentPlanSource(pathArg);
    source.plan();
    return source;
  }

  /**
   * Reads the plan file in this worktree for a command that checks it against the store: parsed
   * (and a malformed plan refused, before any write) only when the store has not seen these exact
   * bytes (docs/cli-cost.md).
   */
  currentPlanSource(pathArg: string): PlanSource {
    const planPath = this.planKey(pathArg);
    const root = this.location.worktreeRoot ?? this.cwd;
    return planFileSource(resolve(root, planPath), planPath, pathArg);
  }

  /** Closes the store (a step command's work is done when its promise resolves: nothing is pending). */
  async close(): Promise<void> {
    await this.opened?.close();
  }
}

/**
 * SPRINGFIELD_PG_CONNECT_TIMEOUT: seconds to keep trying to reach a PostgreSQL server (and to look up a
 * write whose reply was lost) before giving up with exit 3; default 10 (docs/postgres-design.md, "Failures, retries, idempotence").
 */
function connectTimeoutMs(env: NodeJS.ProcessEnv): number | undefined {
  const raw = env.SPRINGFIELD_PG_CONNECT_TIMEOUT;
  if (raw === undefined || raw === '') return undefined;
  const seconds = /^\d+(\.\d+)?$/.test(raw.trim()) ? Number(raw) : NaN;
  if (!(seconds > 0 && seconds <= 3600))
    throw new UsageError(
      'bad_connect_timeout',
      `SPRINGFIELD_PG_CONNECT_TIMEOUT: expected seconds between 0 and 3600, got '${raw}'`,
    );
  return Math.round(seconds * 1000);
}
