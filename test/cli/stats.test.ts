// `springfield stats --json` over a scripted history, on SQLite and on PostgreSQL: two epics, one (docs,
// built by Ralph on claude) passing review the first time, one (code, built on codex) passing after an
// implementation_failure and a re-work session, with a failed run and a merge that met a conflict; then
// merges reverted in the repository's git history (and a revert reverted).
// Every expected figure is worked out by hand in the comments from the runs and events the script writes
// (docs/stats.md defines them).
import { describe, test, type TestContext } from 'node:test';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import assert from 'node:assert/strict';
import { ManualClock } from '../../src/core/clock.ts';
import { openStore, type Store } from '../../src/core/store/index.ts';
import type { GroupFigures, StatsReport } from '../../src/core/stats/index.ts';
import { assertFails, assertOk, makeRepo, type Repo } from '../helpers/gitRepo.ts';
import { runCli } from '../helpers/cliInProcess.ts';
import { postgresForFile } from '../helpers/postgres.ts';
import { script, T0 } from '../helpers/statsHistory.ts';
import { postgresAvailable } from '../helpers/storeBackends.ts';

const group = (r: StatsReport, name: string): GroupFigures => {
  const g = r.groups.find((x) => x.group === name);
  assert.ok(g, `a group named ${name} in ${r.groups.map((x) => x.group).join(', ')}`);
  return g;
};

interface Backend {
  readonly name: string;
  /** A store to script, the CLI's extra arguments and environment to reach it, and the repository to run the CLI in. */
  open(t: TestContext, clock: ManualClock): { store: Store; args: string[]; env: Record<string, string>; repo: Repo };
}

/** Commits `file` (none: an empty commit) with the message's paragraphs in `repo`; returns the commit. */
const commitIn =
  (repo: Repo) =>
  (file: string, ...message: string[]): string => {
    if (file) {
      writeFileSync(join(repo.root, file), `${file}\n`);
      repo.git(['add', file]);
    }
    repo.git(['commit', '-q', '--allow-empty', ...message.flatMap((m) => ['-m', m])]);
    return repo.git(['rev-parse', 'HEAD']);
  };

const pg = postgresAvailable() ? postgresForFile({ durability: 'fast' }) : null;
let databases = 0;
const BACKENDS: Backend[] = [
  {
    name: 'sqlite',
    open(t, clock) {
      const repo = makeRepo();
      const file = `${repo.tmp}/state.db`;
      const store = openStore({ location: file, ifMissing: 'create', clock });
      t.after(async () => {
        await store.close();
        repo.cleanup();
      });
      return { store, args: ['--db', file], env: {}, repo };
    },
  },
  ...(pg
    ? [
        {
          name: 'postgres',
          open(t: TestContext, clock: ManualClock) {
            const repo = makeRepo();
            const url = pg.server.createDatabase(`stats_${process.pid}_${++databases}`);
            const store = openStore({
              location: url,
              repository: { id: 'stats-repo', source: 'configured' },
              host: 'host-a',
              clock,
            });
            t.after(async () => {
              await store.close();
              repo.cleanup();
            });
            return { store, args: [], env: { SPRINGFIELD_DATABASE_URL: url, SPRINGFIELD_REPO_ID: 'stats-repo' }, repo };
          },
        },
      ]
    : []),
];

for (const backend of BACKENDS) {
  describe(`springfield stats on ${backend.name}`, () => {
    test('by preset: the known history gives exactly the figures worked out by hand', async (t) => {
      const clock = new ManualClock(T0);
      const { store, args, env, repo } = backend.open(t, clock);
      await script(store, clock);
      const r = assertOk<StatsReport>(await runCli(repo.root, ['stats', '--json', ...args], env));
      assert.equal(r.by, 'preset');
      assert.equal(r.since, null);
      assert.deepEqual(
        r.groups.map((g) => g.group),
        ['claude', 'codex'],
      );
      // claude: Lisa, Ralph ×2 and Bart on A, Bart ×2 on B; builder of A's two steps. A step-1 is charged
      // 0.30 + (Lisa 0.20 + Bart 0.10) / 2 = 0.45, step-2 0.50 + 0.15 = 0.65: 0.55 per step; 2 sessions each.
      assert.deepEqual(group(r, 'claude'), {
        group: 'claude',
        runs: 6,
        outcomes: { succeeded: 6 },
        cost_usd: 1.3,
        tokens: 8500,
        agent_minutes: 90,
        merged_steps: 2,
        reverted_steps: 0,
        cost_per_merged_step: 0.55,
        tokens_per_merged_step: 3750,
        minutes_per_merged_step: 35,
        sessions_per_merged_step: 2,
        seed_sessions_per_merged_step: 2,
        first_pass: { accepted: 2, reviewed: 2, rate: 1 },
        rework_sessions: 0,
        hours_to_merge: 1.1667,
        conflicts: { met: 0, resolved: 0 },
      });
      // codex: B's three Ralph sessions (one failed, one re-work after the failure); its one step is charged
      // 0.05 + 0.40 + 0.20 + Bart's 0.10 + 0.10 = 0.85 and 5 sessions (seed: 1 + 2).
      assert.deepEqual(group(r, 'codex'), {
        group: 'codex',
        runs: 3,
        outcomes: { failed: 1, succeeded: 2 },
        cost_usd: 0.65,
        tokens: 7900,
        agent_minutes: 65,
        merged_steps: 1,
        reverted_steps: 0,
        cost_per_merged_step: 0.85,
        tokens_per_merged_step: 8900,
        minutes_per_merged_step: 85,
        sessions_per_merged_step: 5,
        seed_sessions_per_merged_step: 3,
        first_pass: { accepted: 0, reviewed: 1, rate: 0 },
        rework_sessions: 1,
        hours_to_merge: 1.6667,
        conflicts: { met: 1, resolved: 1 },
      });
      assert.deepEqual(r.total, {
        group: 'total',
        runs: 9,
        outcomes: { succeeded: 8, failed: 1 },
        cost_usd: 1.95,
        tokens: 16400,
        agent_minutes: 155,
        merged_steps: 3,
        reverted_steps: 0,
        cost_per_merged_step: 0.65,
        tokens_per_merged_step: 5466.6667,
        minutes_per_merged_step: 51.6667,
        sessions_per_merged_step: 3,
        seed_sessions_per_merged_step: 2.3333,
        first_pass: { accepted: 2, reviewed: 3, rate: 0.6667 },
        rework_sessions: 1,
        hours_to_merge: 1.4167,
        conflicts: { met: 1, resolved: 1 },
      });
    });

    test('a merge git shows reverted counts its steps as reverted; a reverted revert does not', async (t) => {
      const clock = new ManualClock(T0);
      const { store, args, env, repo } = backend.open(t, clock);
      const commit = commitIn(repo);
      // A's merge is named by its merged event (as the scheduler's squash merge writes it); B's by its trailer.
      const shaA = commit('a.md', 'Guide');
      const { b } = await script(store, clock, `squash-merged as ${shaA.slice(0, 12)} with 2 trailers`);
      const shaB = commit('b.ts', `Work (${b})`, `Springfield-Epic: ${b}`);
      const reverted = async () => {
        const r = assertOk<StatsReport>(await runCli(repo.root, ['stats', '--json', ...args], env));
        return [...r.groups, r.total].map((g) => [g.group, g.merged_steps, g.reverted_steps]);
      };
      assert.deepEqual(await reverted(), [
        ['claude', 2, 0],
        ['codex', 1, 0],
        ['total', 3, 0],
      ]);
      // A (two steps, built on claude) reverted by git revert: both its merged steps count.
      repo.git(['revert', '--no-edit', shaA]);
      const revertA = repo.git(['rev-parse', 'HEAD']);
      assert.deepEqual(await reverted(), [
        ['claude', 2, 2],
        ['codex', 1, 0],
        ['total', 3, 2],
      ]);
      const text = await runCli(repo.root, ['stats', ...args], env);
      assert.match(text.stdout, /claude: 6 runs · 2 merged steps \(2 reverted\) ·/);
      // The revert reverted: A is back. B reverted in `git revert --reference`'s words (an abbreviated sha).
      repo.git(['revert', '--no-edit', revertA]);
      commit('', `Revert "Work (${b})"`, `This reverts commit ${shaB.slice(0, 9)} (Work (${b}), 2026-04-01).`);
      assert.deepEqual(await reverted(), [
        ['claude', 2, 0],
        ['codex', 1, 1],
        ['total', 3, 1],
      ]);
      // A reverted again after its reapply: the newest revert of A stands, so A counts as reverted.
      repo.git(['revert', '--no-edit', shaA]);
      assert.deepEqual(await reverted(), [
        ['claude', 2, 2],
        ['codex', 1, 1],
        ['total', 3, 3],
      ]);
    });

    test('a merge commit reverted with git revert -m 1 counts the epic it brought in; that revert reverted does not', async (t) => {
      const clock = new ManualClock(T0);
      const { store, args, env, repo } = backend.open(t, clock);
      const commit = commitIn(repo);
      const { b } = await script(store, clock);
      // B's branch, its commits carrying its trailer (as Ralph's do), merged with a merge commit (no squash), as a
      // pull request merged on its host is: the revert names the merge, none of B's commits.
      repo.git(['checkout', '-q', '-b', `epic/${b}`]);
      commit('b.ts', 'Step 1', `Springfield-Epic: ${b}`);
      commit('b2.ts', 'Step 2', `Springfield-Epic: ${b}`);
      repo.git(['checkout', '-q', 'main']);
      commit('main.md', 'Meanwhile on main');
      repo.git(['merge', '-q', '--no-ff', '--no-edit', `epic/${b}`]);
      const merge = repo.git(['rev-parse', 'HEAD']);
      const reverted = async () => {
        const r = assertOk<StatsReport>(await runCli(repo.root, ['stats', '--json', ...args], env));
        return [...r.groups, r.total].map((g) => [g.group, g.merged_steps, g.reverted_steps]);
      };
      assert.deepEqual(await reverted(), [
        ['claude', 2, 0],
        ['codex', 1, 0],
        ['total', 3, 0],
      ]);
      repo.git(['revert', '--no-edit', '-m', '1', merge]);
      const revert = repo.git(['rev-parse', 'HEAD']);
      assert.match(repo.git(['log', '-1', '--format=%B']), new RegExp(`This reverts commit ${merge}, reversing`));
      assert.deepEqual(await reverted(), [
        ['claude', 2, 0],
        ['codex', 1, 1],
        ['total', 3, 1],
      ]);
      repo.git(['revert', '--no-edit', revert]);
      assert.deepEqual(await reverted(), [
        ['claude', 2, 0],
        ['codex', 1, 0],
        ['total', 3, 0],
      ]);
    });

    test('by kind, role, model and epic; a window after the history holds nothing; bad flags get one line', async (t) => {
      const clock = new ManualClock(T0);
      const { store, args, env, repo } = backend.open(t, clock);
      const { a, b } = await script(store, clock);
      const by = async (what: string) =>
        assertOk<StatsReport>(await runCli(repo.root, ['stats', '--json', '--by', what, ...args], env));
      const kind = await by('kind');
      assert.deepEqual(
        kind.groups.map((g) => [
          g.group,
          g.runs,
          g.merged_steps,
          g.cost_per_merged_step,
          g.first_pass.accepted,
          g.first_pass.reviewed,
        ]),
        [
          ['code', 3, 1, 0.85, 0, 1],
          ['docs', 2, 2, 0.55, 2, 2],
          ['epic', 4, 0, null, 0, 0],
        ],
      );
      // By role every merged step counts for each role, charged only that role's share: Lisa's 0.20, Bart's 0.30 and
      // Ralph's 0.30 + 0.50 + 0.65 over 3 steps, which add up to the total's 0.65.
      const role = await by('role');
      assert.deepEqual(
        role.groups.map((g) => [
          g.group,
          g.runs,
          g.merged_steps,
          g.cost_per_merged_step,
          g.sessions_per_merged_step,
          g.first_pass.reviewed,
        ]),
        [
          ['bart', 3, 3, 0.1, 1, 0],
          ['lisa', 1, 3, 0.0667, 0.3333, 0],
          ['ralph', 5, 3, 0.4833, 1.6667, 3],
        ],
      );
      assert.deepEqual(
        (await by('model')).groups.map((g) => [g.group, g.merged_steps]),
        [
          ['claude/default', 2],
          ['codex/gpt-5-codex', 1],
        ],
      );
      assert.deepEqual(
        (await by('epic')).groups.map((g) => [g.group, g.merged_steps, g.cost_per_merged_step, g.hours_to_merge]),
        [
          [a, 2, 0.55, 1.1667],
          [b, 1, 0.85, 1.6667],
        ].sort((x, y) => String(x[0]).localeCompare(String(y[0]))),
      );
      const later = assertOk<StatsReport>(
        await runCli(repo.root, ['stats', '--json', '--since', '2026-04-02', ...args], env),
      );
      assert.deepEqual(
        [later.since, later.groups, later.total.runs, later.total.merged_steps],
        ['2026-04-02T00:00:00.000Z', [], 0, 0],
      );
      const text = await runCli(repo.root, ['stats', ...args], env);
      assert.equal(text.code, 0, text.stderr);
      assert.match(
        text.stdout,
        /claude: 6 runs · 2 merged steps · \$0\.55\/step · 2 sessions\/step \(seed 2\) · 2\/2 first-pass/,
      );
      for (const bad of [
        ['--by', 'colour'],
        ['--since', 'yesterday'],
        ['--since', '7x'],
      ]) {
        const r = await runCli(repo.root, ['stats', ...bad, ...args], env);
        assert.equal(r.code, 2);
        assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
        assert.match(
          r.stderr,
          bad[0] === '--by'
            ? /--by must be one of preset, model, role, kind, epic, got 'colour'/
            : /--since needs a span/,
        );
        assertFails(await runCli(repo.root, ['stats', '--json', ...bad, ...args], env), 2, 'bad_option');
      }
    });
  });
}
