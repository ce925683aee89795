/**
 * PR mode (`"merge": "pr"`, docs/lifecycle.md): the epic's branch is pushed to the configured remote
 * and a pull request opened with GitHub's CLI; the epic is done when `gh pr view` says merged. git and
 * gh run with argument arrays, never through a shell; the body goes to gh on its standard input.
 */
import { spawn } from 'node:child_process';
import { gitEnv, gitRunAsync } from '../git/exec.ts';
import { epicBranch } from './epicWorktree.ts';

/** Why a pull request cannot be opened or was closed: the epic is blocked with this reason (merge_failed). */
export class PullRequestBlocked extends Error {}

interface ToolResult {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly missing: boolean;
}

/** Runs gh (no shell) in `cwd`, feeding `input` to its stdin; a program not on PATH is reported, not thrown. */
function runTool(program: string, args: readonly string[], cwd: string, input = ''): Promise<ToolResult> {
  return new Promise((resolve) => {
    const child = spawn(program, args, {
      cwd,
      env: { ...gitEnv(process.env), GH_PROMPT_DISABLED: '1', GIT_TERMINAL_PROMPT: '0' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('error', (err: NodeJS.ErrnoException) =>
      resolve({ status: null, stdout, stderr: stderr || err.message, missing: err.code === 'ENOENT' }),
    );
    child.on('close', (status) => resolve({ status, stdout, stderr, missing: false }));
    child.stdin.on('error', () => undefined);
    child.stdin.end(input);
  });
}

function firstError(text: string): string {
  return (
    text
      .split('\n')
      .map((l) => l.trim())
      .find((l) => l !== '' && !l.startsWith('hint:'))
      ?.slice(0, 300) ?? ''
  );
}

const NO_GH =
  'gh (the GitHub CLI) is not on PATH: install it and run `gh auth login`, or set "merge": "squash" in .springfield/config.json';

/**
 * Pushes `springfield/<epic>` to `remote` and opens a pull request into the main worktree's branch;
 * returns its URL. A pull request that already exists for the branch (a crash after creating it) is reused.
 */
export async function openPullRequest(o: {
  mainRoot: string;
  epicId: string;
  title: string;
  body: string;
  remote: string;
}): Promise<{ url: string; base: string; pushed: string }> {
  const branch = epicBranch(o.epicId);
  const remoteUrl = await gitRunAsync(o.mainRoot, ['remote', 'get-url', o.remote], process.env);
  if (remoteUrl.status !== 0)
    throw new PullRequestBlocked(
      `no git remote '${o.remote}' to push ${branch} to: add it (git remote add ${o.remote} <url>) or set "remote" in .springfield/config.json`,
    );
  const version = await runTool('gh', ['--version'], o.mainRoot);
  if (version.missing) throw new PullRequestBlocked(NO_GH);
  const base =
    (await gitRunAsync(o.mainRoot, ['symbolic-ref', '--short', 'HEAD'], process.env)).stdout.trim() || 'main';
  const push = await gitRunAsync(
    o.mainRoot,
    ['push', '--force-with-lease', o.remote, `refs/heads/${branch}:refs/heads/${branch}`],
    process.env,
  );
  if (push.status !== 0)
    throw new PullRequestBlocked(
      `git push of ${branch} to ${o.remote} failed: ${firstError(push.stderr) || `exit ${push.status}`}`,
    );
  const pushed = (await gitRunAsync(o.mainRoot, ['rev-parse', `refs/heads/${branch}`], process.env)).stdout.trim();
  const created = await runTool(
    'gh',
    ['pr', 'create', '--head', branch, '--base', base, '--title', o.title, '--body-file', '-'],
    o.mainRoot,
    o.body,
  );
  const url =
    /https?:\/\/\S+/.exec(created.stdout)?.[0] ??
    (/already exists/.test(created.stderr) ? /https?:\/\/\S+/.exec(created.stderr)?.[0] : undefined);
  if (!url)
    throw new PullRequestBlocked(
      `gh pr create failed: ${firstError(created.stderr) || firstError(created.stdout) || `exit ${created.status}`}`,
    );
  return { url, base, pushed };
}

export interface PullRequestState {
  readonly state: string;
  readonly mergedAt: string | null;
}

/** The pull request's state from `gh pr view <url> --json state,mergedAt`; throws with gh's message when it cannot say. */
export async function pullRequestState(mainRoot: string, url: string): Promise<PullRequestState> {
  const r = await runTool('gh', ['pr', 'view', url, '--json', 'state,mergedAt'], mainRoot);
  if (r.missing) throw new PullRequestBlocked(NO_GH);
  if (r.status !== 0) throw new Error(`gh pr view ${url} failed: ${firstError(r.stderr) || `exit ${r.status}`}`);
  try {
    const v = JSON.parse(r.stdout) as { state?: unknown; mergedAt?: unknown };
    if (typeof v.state !== 'string') throw new Error('no state');
    return { state: v.state, mergedAt: typeof v.mergedAt === 'string' && v.mergedAt !== '' ? v.mergedAt : null };
  } catch {
    throw new Error(`gh pr view ${url} printed no state: ${r.stdout.slice(0, 200)}`);
  }
}
