import assert from 'node:assert/strict';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  realpathSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ClaimResult, PlanView, StepView } from '../../src/core/store/types.ts';

/** The project root (two levels above this file) and the bundled CLI that `npm test` builds first. */
export const PROJECT_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const CLI_PATH = join(PROJECT_ROOT, 'dist', 'cli.cjs');

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

let testState: string | undefined;

/**
 * This test process's own user state directory (XDG_STATE_HOME), so what a test allows never reaches
 * the real ~/.local/state and no test sees another's decisions; removed when the process exits.
 */
export function testStateHome(): string {
  if (!testState) {
    const dir = mkdtempSync(join(tmpdir(), 'sf-test-state-'));
    testState = dir;
    process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  }
  return testState;
}

/** Environment for child processes: no editor leakage, no inherited Springfield or git overrides, a private user state. */
export function cleanEnv(extra: Readonly<Record<string, string | undefined>> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const key of Object.keys(env)) {
    if (
      key === 'ELECTRON_RUN_AS_NODE' ||
      key.startsWith('VSCODE_') ||
      key.startsWith('SPRINGFIELD_') ||
      key.startsWith('GIT_')
    )
      delete env[key];
  }
  env.GIT_CONFIG_NOSYSTEM = '1';
  env.XDG_STATE_HOME = testStateHome();
  for (const [key, value] of Object.entries(extra)) {
    if (value === undefined) delete env[key];
    else env[key] = value;
  }
  return env;
}

function git(args: readonly string[], cwd: string): string {
  return execFileSync('git', args, {
    cwd,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    env: cleanEnv(),
  }).trim();
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
  try {
    return buildRepo(tmp, options);
  } catch (err) {
    rmSync(tmp, { recursive: true, force: true });
    throw err;
  }
}

function buildRepo(tmp: string, options: RepoOptions): Repo {
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
export function runCli(
  cwd: string,
  args: readonly string[],
  env: Readonly<Record<string, string | undefined>> = {},
): CliResult {
  const r = spawnSync(process.execPath, [CLI_PATH, ...args], {
    cwd,
    env: cleanEnv(env),
    encoding: 'utf8',
    timeout: 60_000,
  });
  if (r.error) throw r.error;
  return cliResult(r.status, r.stdout, r.stderr);
}

/** Like runCli, without blocking the event loop (for runs that overlap other work). */
export function runCliAsync(
  cwd: string,
  args: readonly string[],
  env: Readonly<Record<string, string | undefined>> = {},
): Promise<CliResult> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [CLI_PATH, ...args], {
      cwd,
      env: cleanEnv(env),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      stdout += d;
    });
    child.stderr.setEncoding('utf8').on('data', (d: string) => {
      stderr += d;
    });
    child.on('error', reject);
    child.on('close', (code) => resolvePromise(cliResult(code, stdout, stderr)));
  });
}

/** A run's result from its exit code and output. */
export function cliResult(code: number | null, stdout: string, stderr: string): CliResult {
  return {
    code,
    stdout,
    stderr,
    json<T>() {
      try {
        return JSON.parse(stdout) as T;
      } catch {
        throw new Error(`stdout is not one JSON document (exit ${code}):\n${stdout}\nstderr:\n${stderr}`);
      }
    },
  };
}

/** Asserts a failed run: its exit code, exactly one `springfield: ` line on stderr, no stack trace, and (with --json) the error document. */
export function assertFails(r: CliResult, exit: number, code: string): { code: string; message: string } {
  const where = `exit ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`;
  assert.equal(r.code, exit, where);
  assert.match(r.stderr, /^springfield: [^\n]+\n$/, `stderr must be one line: ${where}`);
  assert.ok(!r.stdout.includes('    at ') && !r.stderr.includes('    at '), `stack trace leaked: ${where}`);
  if (r.stdout === '') return { code, message: r.stderr.slice('springfield: '.length).trim() };
  const doc = r.json<{ error: { code: string; message: string } }>();
  assert.deepEqual(Object.keys(doc), ['error'], where);
  assert.deepEqual(Object.keys(doc.error).sort(), ['code', 'message'], where);
  assert.equal(doc.error.code, code, where);
  assert.equal(`springfield: ${doc.error.message.replace(/\s*\n\s*/g, ' ')}\n`, r.stderr, where);
  return doc.error;
}

/** Asserts exit 0 and returns the parsed --json output. */
export function assertOk<T = Record<string, unknown>>(r: CliResult): T {
  assert.equal(r.code, 0, `expected success, got exit ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
  assert.equal(r.stderr, '', 'a successful command writes nothing on stderr');
  return r.json<T>();
}

/** Runs the CLI with `--json` appended. */
export function runJson(
  cwd: string,
  args: readonly string[],
  env: Readonly<Record<string, string | undefined>> = {},
): CliResult {
  return runCli(cwd, [...args, '--json'], env);
}

export type Claimed = Extract<ClaimResult, { claimed: true }>;
export type NotClaimed = Extract<ClaimResult, { claimed: false }>;

/** Asserts a `claim --json` run claimed a step and returns the claim. */
export function assertClaimed(r: CliResult): Claimed {
  const c = assertOk<ClaimResult>(r);
  assert.ok(c.claimed, `expected a claim: ${r.stdout}`);
  return c;
}

/** Asserts a `claim --json` run exited 0 without claiming and returns the answer. */
export function assertNotClaimed(r: CliResult): NotClaimed {
  const c = assertOk<ClaimResult>(r);
  assert.ok(!c.claimed, `expected no claim: ${r.stdout}`);
  return c;
}

/** Every step and substep of one plan, by anchor, from `show <plan> --json` run in `cwd`. */
export function showSteps(
  cwd: string,
  planPath: string,
  env: Readonly<Record<string, string | undefined>> = {},
): Map<string, StepView> {
  const { plans } = assertOk<{ plans: PlanView[] }>(runJson(cwd, ['show', planPath], env));
  const out = new Map<string, StepView>();
  for (const s of plans[0]?.steps ?? []) {
    out.set(s.anchor, s);
    for (const sub of s.substeps) out.set(sub.anchor, sub);
  }
  return out;
}

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) newest = Math.max(newest, statSync(join(entry.parentPath, entry.name)).mtimeMs);
  }
  return newest;
}

/** Builds dist/cli.cjs when missing or older than src/ (under a lock, so parallel test files never spawn a half-written bundle). */
export function ensureCli(): void {
  const lock = join(PROJECT_ROOT, 'dist', '.test-build-lock');
  mkdirSync(dirname(lock), { recursive: true });
  const deadline = Date.now() + 120_000;
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const held = statSync(lock, { throwIfNoEntry: false });
      if (Date.now() > deadline || (held && Date.now() - held.mtimeMs > 120_000))
        rmSync(lock, { recursive: true, force: true });
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 50);
    }
  }
  try {
    const built = existsSync(CLI_PATH) ? statSync(CLI_PATH).mtimeMs : 0;
    // The demo agents' bundle is built from scripts/standInAgent.ts (esbuild.mjs).
    const standIn = join(PROJECT_ROOT, 'scripts', 'standInAgent.ts');
    if (
      built < Math.max(newestMtime(join(PROJECT_ROOT, 'src')), statSync(standIn).mtimeMs) ||
      !existsSync(join(PROJECT_ROOT, 'dist', 'standInAgent.cjs'))
    ) {
      execFileSync(process.execPath, ['esbuild.mjs'], {
        cwd: PROJECT_ROOT,
        stdio: ['ignore', 'ignore', 'inherit'],
        env: cleanEnv(),
      });
    }
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

/**
 * A planning worktree for `epic`, where the scheduler would start Lisa (`<root>.springfield/<epic>-plan`,
 * detached at main): agents never run in the main worktree (docs/lifecycle.md, "Where work happens").
 */
export function planningWorktree(repo: Repo, epic: string): string {
  const path = `${repo.root}.springfield/${epic}-plan`;
  if (!existsSync(path)) repo.git(['worktree', 'add', '-q', '--detach', path, 'main']);
  return realpathSync(path);
}
