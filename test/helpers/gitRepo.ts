import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The project root (two levels above this file) and the bundled CLI that `npm test` builds first. */
export const PROJECT_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const CLI_PATH = join(PROJECT_ROOT, 'dist', 'cli.js');

export interface RepoOptions {
  /** Files committed on `main`, by repository-relative path. */
  readonly files?: Readonly<Record<string, string>>;
  /** Linked worktrees to add, each on its own branch, under `<tmp>/worktrees/<name>`. */
  readonly worktrees?: readonly string[];
  /** Make `root` a bare repository (cloned from the committed files); worktrees hang off it. */
  readonly bare?: boolean;
}

export interface Repo {
  /** The temp directory holding everything (real path). */
  readonly tmp: string;
  /** The main worktree, or the bare repository directory (real path). */
  readonly root: string;
  /** The real path of a worktree added by name. */
  worktree(name: string): string;
  /** Adds a linked worktree on branch `wt/<name>` at `path` (default `<tmp>/worktrees/<name>`). */
  addWorktree(name: string, path?: string): string;
  /** Runs git in `cwd` (default: root) and returns trimmed stdout. */
  git(args: readonly string[], cwd?: string): string;
  cleanup(): void;
}

export interface CliResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
  /** Parses stdout as exactly one JSON document (throws otherwise). */
  json<T = Record<string, unknown>>(): T;
}

/** Environment for child processes: no editor leakage, no inherited Springfield or git overrides. */
export function cleanEnv(extra: Readonly<Record<string, string | undefined>> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const key of Object.keys(env)) {
    if (key === 'ELECTRON_RUN_AS_NODE' || key.startsWith('VSCODE_') || key.startsWith('SPRINGFIELD_') || key.startsWith('GIT_')) delete env[key];
  }
  env.GIT_CONFIG_NOSYSTEM = '1';
  for (const [key, value] of Object.entries(extra)) {
    if (value === undefined) delete env[key];
    else env[key] = value;
  }
  return env;
}

function git(args: readonly string[], cwd: string): string {
  return execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], env: cleanEnv() }).trim();
}

function configure(dir: string): void {
  git(['config', 'user.email', 'test@springfield.invalid'], dir);
  git(['config', 'user.name', 'Springfield Test'], dir);
  git(['config', 'commit.gpgsign', 'false'], dir);
}

/** Writes `files` under `dir`, creating parent directories. */
export function writeFiles(dir: string, files: Readonly<Record<string, string>>): void {
  for (const [rel, text] of Object.entries(files)) {
    const path = join(dir, rel);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, text);
  }
}

/** Creates a real git repository (main branch, one commit) with linked worktrees in a temp dir. */
export function makeRepo(options: RepoOptions = {}): Repo {
  const tmp = realpathSync(mkdtempSync(join(tmpdir(), 'springfield-repo-')));
  const work = join(tmp, options.bare ? 'seed' : 'repo');
  mkdirSync(work);
  git(['init', '-q', '-b', 'main'], work);
  configure(work);
  writeFiles(work, { 'README.md': '# fixture\n', ...options.files });
  git(['add', '-A'], work);
  git(['commit', '-q', '-m', 'fixture'], work);
  let root = work;
  if (options.bare) {
    root = join(tmp, 'bare.git');
    git(['clone', '-q', '--bare', work, root], tmp);
    configure(root);
    rmSync(work, { recursive: true, force: true });
  }
  const worktrees = new Map<string, string>();
  const repo: Repo = {
    tmp,
    root,
    worktree(name) {
      const path = worktrees.get(name);
      if (!path) throw new Error(`no worktree '${name}'`);
      return path;
    },
    addWorktree(name, path = join(tmp, 'worktrees', name)) {
      mkdirSync(dirname(path), { recursive: true });
      git(['worktree', 'add', '-q', '-b', `wt/${name}`, path, 'main'], root);
      const real = realpathSync(path);
      worktrees.set(name, real);
      return real;
    },
    git: (args, cwd = root) => git(args, cwd),
    cleanup: () => rmSync(tmp, { recursive: true, force: true }),
  };
  for (const name of options.worktrees ?? []) repo.addWorktree(name);
  return repo;
}

/** Runs the built CLI as a real process in `cwd`; `env` entries override (undefined removes). */
export function runCli(cwd: string, args: readonly string[], env: Readonly<Record<string, string | undefined>> = {}): CliResult {
  const r = spawnSync(process.execPath, [CLI_PATH, ...args], { cwd, env: cleanEnv(env), encoding: 'utf8', timeout: 60_000 });
  if (r.error) throw r.error;
  const stdout = r.stdout;
  return {
    code: r.status,
    stdout,
    stderr: r.stderr,
    json<T>() {
      try {
        return JSON.parse(stdout) as T;
      } catch {
        throw new Error(`stdout is not one JSON document (exit ${r.status}):\n${stdout}\nstderr:\n${r.stderr}`);
      }
    },
  };
}
