// Planning worktrees left by a scheduler that was killed (docs/lifecycle.md): the next scheduler
// removes them when it starts, unless a live run still works in one.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { pidAlive } from '../../src/core/runs/processGroup.ts';
import { CLI_PATH } from '../helpers/gitRepo.ts';
import { faultRepo } from './harness.ts';

/** Polls until `probe` returns something (a bounded wait for another process, not a timing assertion). */
async function until<T>(what: string, probe: () => T | undefined): Promise<T> {
  for (let i = 0; i < 600; i++) {
    const found = probe();
    if (found !== undefined) return found;
    await sleep(100);
  }
  throw new Error(`gave up waiting for ${what}`);
}

test(
  'a scheduler starting sweeps the planning worktree a killed scheduler left; one a live run works in is kept',
  { timeout: 240_000 },
  async (t) => {
    const f = faultRepo(t);
    const epic = f.epic('Left behind');
    f.behave({ lisa: { do: 'hang' } });
    const planning = join(`${f.repo}.springfield`, `${epic}-plan`);
    const listed = () => f.git('worktree', 'list', '--porcelain').includes(planning);

    // Scheduler A starts Lisa in her planning worktree and is killed while she works.
    const a = spawn(process.execPath, [CLI_PATH, 'orchestrate', '--watch', '--interval', '1', '--json'], {
      cwd: f.repo,
      env: f.env,
      stdio: 'ignore',
    });
    t.after(() => {
      if (a.exitCode === null && a.signalCode === null) a.kill('SIGKILL');
    });
    const hung = await until('Lisa to start', () =>
      f.records().find((r) => r.role === 'lisa' && r.event === 'spawned'),
    );
    const agents = [Number(hung.child), Number(hung.pid)];
    const endAgents = () => {
      for (const pid of agents) if (pidAlive(pid)) process.kill(pid, 'SIGKILL');
    };
    t.after(endAgents);
    a.kill('SIGKILL');
    await once(a, 'exit');
    assert.ok(existsSync(planning) && listed(), 'A left her planning worktree');

    // Scheduler B takes one pass while her run is live (--until-idle would wait for it): the worktree is kept.
    const b = spawnSync(process.execPath, [CLI_PATH, 'orchestrate', '--once', '--json'], {
      cwd: f.repo,
      env: f.env,
      encoding: 'utf8',
      timeout: 120_000,
    });
    assert.equal(b.status, 0, b.stderr);
    assert.ok(existsSync(planning) && listed(), `a planning worktree a live run works in is kept\n${b.stderr}`);

    // Her agent dies; her supervisor records the run as ended. No scheduler was there to remove the worktree.
    endAgents();
    await until('her run to end', () => {
      const runs = (f.sf('runs', '--epic', epic).json as { runs: { role: string; ended_at: string | null }[] }).runs;
      return runs.length > 0 && runs.every((r) => r.ended_at !== null) ? true : undefined;
    });
    // Set aside, the epic gets no planner again: only the sweep can remove the worktree now.
    assert.equal(f.sf('epic', 'defer', epic).code, 0);
    assert.ok(existsSync(planning) && listed());

    const c = f.orchestrate();
    assert.equal(c.code, 0, c.stderr);
    assert.equal(existsSync(planning), false, `the leftover planning worktree was swept\n${c.stderr}`);
    assert.equal(listed(), false, 'git no longer lists it');
    assert.match(
      c.stderr,
      new RegExp(`removed the planning worktree .*${epic}-plan: left by a scheduler that stopped`),
    );
    assert.deepEqual(f.git('status', '--porcelain'), '', 'main untouched');
  },
);
