// The setup a bench that drives `springfield orchestrate` needs (bench/fleet.ts): a clean
// environment, a git repository with its first commit, and approved epics from plan files.
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

/** This process's environment without editor, Springfield and git variables, with its own state folder under `dir`. */
export function benchEnv(dir: string, more: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env))
    if (k !== 'ELECTRON_RUN_AS_NODE' && !/^(VSCODE_|SPRINGFIELD_|GIT_)/.test(k)) env[k] = v;
  return { ...env, ...more, XDG_STATE_HOME: join(dir, 'state'), GIT_CONFIG_NOSYSTEM: '1' };
}

/** `git init` in `repo` and one commit of what is there. */
export function initRepo(repo: string, env: NodeJS.ProcessEnv, message: string): void {
  const git = (...args: string[]) => execFileSync('git', args, { cwd: repo, stdio: 'ignore', env });
  git('init', '-q', '-b', 'main');
  git('config', 'user.email', 'bench@example.com');
  git('config', 'user.name', 'bench');
  git('config', 'commit.gpgsign', 'false');
  git('add', '-A');
  git('commit', '-qm', message);
}

/** A trivial epic per plan file (title → repository-relative plan path), planned by a person and approved, in order. */
export function approvedEpics(cli: string, repo: string, env: NodeJS.ProcessEnv, plans: [string, string][]): void {
  const sf = (...args: string[]) =>
    execFileSync(process.execPath, [cli, ...args, '--json'], { cwd: repo, env, encoding: 'utf8' });
  for (const [title, plan] of plans) {
    const created = JSON.parse(sf('epic', 'create', title, '--complexity', 'trivial', '--planner', 'person')) as {
      id: string;
    };
    sf('plan', 'propose', created.id, plan, '--agent', 'homer');
    sf('plan', 'approve', created.id, '--agent', 'marge');
  }
}
