// Finding and cleaning up worktrees (docs/worktrees.md): `springfield worktrees` lists every worktree
// Springfield made; `worktrees prune` removes those whose epic is done, deferred or gone — never one
// with a live agent run, one with uncommitted work only when forced with a reason, archive first.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { CLI_PATH } from '../helpers/gitRepo.ts';
import { approve, faultRepo, type FaultRepo } from './harness.ts';

interface Listed {
  path: string;
  kind: string;
  epic_id: string;
  status: string | null;
  branch: string | null;
  dirty: number;
  ahead: number | null;
  behind: number | null;
  disk_bytes: number;
  live_runs: number;
  prunable: string | null;
}

function list(f: FaultRepo): Listed[] {
  const r = f.sf('worktrees');
  assert.equal(r.code, 0, r.stderr);
  return r.json.worktrees as Listed[];
}

function started(f: FaultRepo, epic: string): string {
  approve(f, epic);
  const r = f.sf('epic', 'start', epic);
  assert.equal(r.code, 0, r.stderr);
  return String(r.json.worktree_path);
}

function branchExists(f: FaultRepo, branch: string): boolean {
  return f.git('branch', '--list', branch) !== '';
}

test(
  "prune removes a deferred or gone epic's worktree (its branch kept), never one with a live run, one with uncommitted work only when forced with a reason",
  { timeout: 300_000 },
  async (t) => {
    const f = faultRepo(t);
    const clean = f.epic('Deferred clean');
    const dirty = f.epic('Deferred dirty');
    const busy = f.epic('Busy');
    const working = f.epic('Working');
    assert.equal(f.orchestrate().code, 0, 'Lisa proposed the four plans');
    const wt = {
      clean: started(f, clean),
      dirty: started(f, dirty),
      busy: started(f, busy),
      working: started(f, working),
    };
    writeFileSync(join(wt.dirty, 'scratch.txt'), 'half done\n');
    // An agent at work in Busy's worktree: a real `springfield run` whose agent waits.
    const agent = spawn(
      process.execPath,
      [CLI_PATH, 'run', '--role', 'ralph', '--epic', busy, '--', process.execPath, '-e', 'setInterval(() => {}, 1000)'],
      { cwd: wt.busy, env: f.env, stdio: 'ignore' },
    );
    t.after(() => agent.kill('SIGKILL'));
    const deadline = Date.now() + 30_000;
    while (
      !(f.sf('runs', '--epic', busy).json.runs as { status: string; pid: number | null }[]).some(
        (r) => r.status === 'running' && r.pid !== null,
      )
    ) {
      assert.ok(Date.now() < deadline, 'the agent run was recorded');
      await new Promise((r) => setTimeout(r, 200));
    }
    for (const e of [clean, dirty, busy]) assert.equal(f.sf('epic', 'defer', e).code, 0);
    // A worktree at Springfield's place for an epic the store no longer has.
    const gone = join(`${f.repo}.springfield`, 'sf-0000dead');
    f.git('worktree', 'add', '-q', '-b', 'springfield/sf-0000dead', gone);

    const before = list(f);
    const at = (path: string) => before.find((w) => w.path === realpathSync(path)) as Listed;
    assert.equal(before.length, 5, JSON.stringify(before.map((w) => w.path)));
    assert.deepEqual(at(wt.clean), {
      ...at(wt.clean),
      kind: 'epic',
      epic_id: clean,
      status: 'deferred',
      branch: `springfield/${clean}`,
      dirty: 0,
      live_runs: 0,
      prunable: 'its epic is deferred',
    });
    assert.ok((at(wt.clean).ahead ?? 0) >= 1, 'the handoff commit is on its branch');
    assert.equal(at(wt.clean).behind, 0);
    assert.ok(at(wt.clean).disk_bytes > 0);
    assert.equal(at(wt.dirty).dirty, 1);
    assert.equal(at(wt.busy).live_runs, 1);
    assert.equal(at(wt.busy).prunable, null, 'a live run keeps it');
    assert.equal(at(wt.working).prunable, null);
    assert.equal(at(gone).prunable, 'its epic is gone from the store');
    assert.match(
      spawnText(f, ['worktrees']),
      new RegExp(
        `${clean} Deferred clean\\n  .*${clean}\\n  springfield/${clean} · deferred · clean · \\d+ ahead, 0 behind · .*\\n  prunable: its epic is deferred`,
      ),
    );

    const dry = f.sf('worktrees', 'prune', '--dry-run');
    assert.equal(dry.code, 0, dry.stderr);
    assert.deepEqual(
      (dry.json.removed as { epic_id: string }[]).map((w) => w.epic_id).sort(),
      [clean, 'sf-0000dead'].sort(),
    );
    const keptWhy = Object.fromEntries(
      (dry.json.kept as { epic_id: string; reason: string }[]).map((w) => [w.epic_id, w.reason]),
    );
    assert.match(keptWhy[dirty] ?? '', /^1 uncommitted file; commit or stash them, or prune with --force REASON$/);
    assert.equal(keptWhy[busy], '1 agent run is working there');
    assert.equal(keptWhy[working], 'its epic is in_progress');
    assert.equal(list(f).length, 5, 'a dry run removes nothing');

    const pruned = f.sf('worktrees', 'prune');
    assert.equal(pruned.code, 0, pruned.stderr);
    assert.equal(existsSync(wt.clean), false);
    assert.equal(existsSync(gone), false);
    assert.ok(
      branchExists(f, `springfield/${clean}`),
      'a deferred epic keeps its branch: resuming it makes the worktree again',
    );
    assert.ok(branchExists(f, 'springfield/sf-0000dead'), "a gone epic's branch is kept: it was never merged");
    for (const path of [wt.dirty, wt.busy, wt.working]) assert.ok(existsSync(path), `${path} stays`);
    assert.ok(existsSync(join(wt.dirty, 'scratch.txt')));
    const event = (f.sf('events', '--epic', clean).json.events as { event: string; reason: string | null }[]).find(
      (e) => /removed/.test(e.reason ?? ''),
    );
    assert.match(event?.reason ?? '', /^worktree .* removed: its epic is deferred$/);
    const recorded = (id: string) => f.sf('epic', 'show', id).json.worktree_path;
    assert.equal(recorded(clean), null, 'a removed worktree is forgotten by the store');
    assert.equal(recorded(busy), wt.busy, 'a kept one stays recorded');

    const noReason = f.sf('worktrees', 'prune', '--force', ' ');
    assert.equal(noReason.code, 2, noReason.stdout);
    assert.ok(existsSync(join(wt.dirty, 'scratch.txt')), 'a refused force removes nothing');

    const forced = f.sf('worktrees', 'prune', '--force', 'scratch notes only');
    assert.equal(forced.code, 0, forced.stderr);
    assert.equal(existsSync(wt.dirty), false, 'forced with a reason, uncommitted work goes');
    assert.ok(existsSync(wt.busy), 'forcing never removes a worktree an agent is working in');
    assert.equal((forced.json.kept as { epic_id: string }[]).find((w) => w.epic_id === busy)?.epic_id, busy);
    const forcedEvent = (f.sf('events', '--epic', dirty).json.events as { reason: string | null }[]).find((e) =>
      /removed/.test(e.reason ?? ''),
    );
    assert.match(forcedEvent?.reason ?? '', /forced with 1 uncommitted file: scratch notes only/);

    agent.kill('SIGTERM');
    await new Promise((r) => agent.once('exit', r));
    const after = f.sf('worktrees', 'prune');
    assert.equal(after.code, 0, after.stderr);
    assert.equal(existsSync(wt.busy), false, "once the run ended, the deferred epic's worktree goes");
    assert.deepEqual(
      list(f).map((w) => w.epic_id),
      [working],
    );
  },
);

test(
  'a done epic whose archive command failed keeps its worktree until prune archives it (told the epic, its title and the worktree) and removes it with its branch',
  { timeout: 300_000 },
  async (t) => {
    const f = faultRepo(t);
    const gate = join(f.base, 'archive-ok');
    const record = join(f.base, 'archived.json');
    const archive = [
      process.execPath,
      '-e',
      `const fs=require('fs');if(!fs.existsSync(${JSON.stringify(gate)}))process.exit(4);fs.writeFileSync(${JSON.stringify(record)},JSON.stringify({epic:process.env.SPRINGFIELD_EPIC,title:process.env.SPRINGFIELD_EPIC_TITLE,worktree:process.env.SPRINGFIELD_WORKTREE,cwd:process.cwd()}))`,
    ];
    f.config({ archive: [archive] });
    const epic = f.epic('Archived later');
    assert.equal(f.orchestrate().code, 0);
    approve(f, epic);
    const run = f.orchestrate();
    assert.equal(run.code, 0, run.stderr);
    assert.match(
      run.stderr,
      /exited 4, so the worktree .* is kept \(fix it, then `springfield worktrees prune` archives and removes it\)/,
    );
    const [left] = list(f);
    assert.equal(left?.status, 'done');
    assert.equal(left?.prunable, 'its epic is done');

    const refused = f.sf('worktrees', 'prune');
    assert.equal(refused.code, 0, refused.stderr);
    assert.match((refused.json.kept as { reason: string }[])[0]?.reason ?? '', /^the archive command `.*` exited 4$/);
    assert.ok(existsSync(String(left?.path)), 'a failed archive keeps the worktree');
    assert.notEqual(f.sf('epic', 'show', epic).json.worktree_path, null, 'and the store still records it');

    // Changed by hand and not allowed: prune runs no archive command it was not allowed to.
    const configPath = join(f.repo, '.springfield', 'config.json');
    writeFileSync(configPath, readFileSync(configPath, 'utf8').replace('"archive"', '"maxParallelAgents":1,"archive"'));
    const unallowed = f.sf('worktrees', 'prune');
    assert.notEqual(unallowed.code, 0);
    assert.match(unallowed.stderr + unallowed.stdout, /allow/);
    assert.ok(existsSync(String(left?.path)));
    assert.equal(f.sf('worktrees', 'prune', '--dry-run').code, 0, 'a dry run runs nothing, so it needs no allowing');
    assert.equal(f.sf('allow').code, 0);

    writeFileSync(gate, '');
    const pruned = f.sf('worktrees', 'prune');
    assert.equal(pruned.code, 0, pruned.stderr);
    assert.deepEqual(
      (pruned.json.removed as { branch_deleted: boolean }[]).map((w) => w.branch_deleted),
      [true],
    );
    assert.equal(existsSync(String(left?.path)), false);
    assert.equal(f.sf('epic', 'show', epic).json.worktree_path, null, 'pruned: forgotten by the store');
    assert.equal(branchExists(f, `springfield/${epic}`), false, "a done epic's branch goes: its work is on main");
    assert.deepEqual(JSON.parse(readFileSync(record, 'utf8')), {
      epic,
      title: 'Archived later',
      worktree: left?.path,
      cwd: left?.path,
    });
    assert.equal(existsSync(`${f.repo}.springfield`), false, 'the emptied default folder goes too');
  },
);

/** The text a person reads (sf() always asks for --json). */
function spawnText(f: FaultRepo, args: string[]): string {
  return spawnSync(process.execPath, [CLI_PATH, ...args], { cwd: f.repo, env: f.env, encoding: 'utf8' }).stdout;
}

test(
  '"worktreeRoot" in config.json says where planning and epic worktrees go, for the scheduler, epic start and worktrees alike',
  { timeout: 300_000 },
  async (t) => {
    const f = faultRepo(t);
    const trees = join(f.base, 'trees');
    f.config({ worktreeRoot: trees });
    const epic = f.epic('Somewhere else');
    assert.equal(f.orchestrate().code, 0);
    const lisa = (f.sf('runs', '--epic', epic).json.runs as { role: string; worktree: string }[]).find(
      (r) => r.role === 'lisa',
    );
    assert.equal(lisa?.worktree, join(realpathSync(trees), `${epic}-plan`), 'Lisa planned in the configured folder');
    const wt = started(f, epic);
    assert.equal(wt, join(realpathSync(trees), epic));
    assert.deepEqual(
      list(f).map((w) => w.path),
      [wt],
    );
    assert.equal(existsSync(`${f.repo}.springfield`), false, 'nothing at the default place');
    writeFileSync(join(f.repo, '.springfield', 'config.json'), JSON.stringify({ worktreeRoot: ' ' }));
    const refused = f.sf('worktrees');
    assert.equal(refused.code, 2);
    assert.match(refused.stderr + refused.stdout, /config\.json: worktreeRoot: must name a folder/);
  },
);
