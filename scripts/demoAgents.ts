// The demo's agent part: stand-in agents (scripts/standInAgent.ts, no model) take an epic from
// planned to done under `springfield orchestrate`, each following only the prompt in its context
// file, in a repository of their own; the person's one act is approving Lisa's plan.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CLI, sf } from './demoRepo.ts';

const STAND_IN = resolve(dirname(fileURLToPath(import.meta.url)), 'standInAgent.ts');

function orchestrate(repo: string, env: NodeJS.ProcessEnv): void {
  const r = spawnSync(process.execPath, [CLI, 'orchestrate', '--watch', '--until-idle', '--interval', '1'], {
    cwd: repo,
    stdio: ['ignore', 'ignore', 'pipe'],
    encoding: 'utf8',
    env: { ...process.env, ...env },
  });
  for (const line of r.stderr.split('\n').filter((l) => l && !l.includes('] '))) console.log(`  ${line}`);
  if (r.status !== 0) throw new Error(`orchestrate exited ${r.status}`);
}

/** Builds `<base>/agents-demo`, runs the stand-ins through planning, approval, building, review and merge; returns the repository. */
export function runStandInAgents(base: string): string {
  const repo = join(base, 'agents-demo');
  mkdirSync(repo);
  writeFileSync(join(repo, '.gitignore'), '.springfield/\n');
  writeFileSync(join(repo, 'README.md'), '# A repository the stand-in agents work on\n');
  for (const args of [
    ['init', '-q', '-b', 'main'],
    ['config', 'user.email', 'demo@example.com'],
    ['config', 'user.name', 'Springfield demo'],
    ['add', '-A'],
    ['commit', '-qm', 'Start'],
  ]) {
    execFileSync('git', args, { cwd: repo, stdio: 'ignore' });
  }
  const epic = String(
    sf(repo, [
      'epic',
      'create',
      'Greeting command',
      '--brief',
      'Print a friendly greeting.',
      '--complexity',
      'standard',
    ]).id,
  );
  const agent = [process.execPath, STAND_IN, '$SPRINGFIELD_CONTEXT_FILE'];
  mkdirSync(join(repo, '.springfield'), { recursive: true });
  writeFileSync(
    join(repo, '.springfield', 'config.json'),
    JSON.stringify({ roles: { lisa: agent, ralph: agent, bart: agent }, maxParallelAgents: 2 }, null, 2),
  );
  // Nothing the config names runs until allowed; the demo's decision is kept beside its repository, not in your own state.
  const state = { XDG_STATE_HOME: join(base, 'state') };
  sf(repo, ['allow'], state);
  console.log(`  ${repo}: epic ${epic}, roles played by ${STAND_IN} (allowed with 'springfield allow')`);
  orchestrate(repo, state);
  sf(repo, ['plan', 'approve', epic]);
  console.log(`  (a person) approved Lisa's plan plans/${epic}.md`);
  orchestrate(repo, state);
  const runs = sf(repo, ['runs', '--epic', epic]) as { sessions: Record<string, Record<string, number>> };
  const shown = sf(repo, ['epic', 'show', epic]);
  console.log(`  ${epic} is ${String(shown.status)}; sessions: ${JSON.stringify(runs.sessions[epic])}`);
  return repo;
}
