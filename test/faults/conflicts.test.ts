// Conflicts that resolve themselves, end to end (docs/files.md): real `springfield orchestrate`, real
// git, two epics built at the same time by scripted builders, one merging after the other.
// - Both add an entry to one list and a line to one changelog (no **Files:**): both merge, with no
//   person and no extra builder session, and the merge says what was resolved how.
// - Both set the same line differently: one Ralph session resolves it, then it merges.
// - A mechanical resolution that breaks verification is undone; Ralph's session fails; the epic is
//   blocked for a person once, its branch as it was and no rebase left half-done.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { CLI_PATH } from '../helpers/gitRepo.ts';
import { ADMIT_ANY_MACHINE } from '../../src/shared/fleetSettings.ts';

/** The builder: its step applies the edits SF_EDITS names for its epic, once the other builder has started too (bounded). A conflict session resolves or fails as SF_RESOLVER says. */
const AGENT = String.raw`
const { execFileSync, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const env = process.env;
const sf = (...a) => execFileSync(process.execPath, [env.SF_CLI, ...a], { encoding: 'utf8' });
const git = (...a) => spawnSync('git', a, { encoding: 'utf8', env: { ...env, GIT_EDITOR: 'true' } });
const log = (o) => fs.appendFileSync(env.SF_LOG, JSON.stringify({ ...o, epic: env.SPRINGFIELD_EPIC, at: Date.now() }) + '\n');
const epic = env.SPRINGFIELD_EPIC;
const context = fs.readFileSync(env.SPRINGFIELD_CONTEXT_FILE, 'utf8');
if (context.startsWith('# This run: resolve a merge conflict')) {
  log({ event: 'conflict-session', context });
  if (env.SF_RESOLVER === 'fail') process.exit(1);
  // Keeps the higher limit: both sides' intent is "at least this much".
  let r = git('rebase', 'main');
  for (let i = 0; i < 20 && r.status !== 0; i++) {
    for (const f of git('diff', '--name-only', '--diff-filter=U').stdout.split('\n').filter(Boolean)) {
      const text = fs.readFileSync(f, 'utf8').replace(/^<{7}.*\n([\s\S]*?)^={7}\n([\s\S]*?)^>{7}.*\n/gm, (_, a, b) => {
        const n = (s) => Number((/limit=(\d+)/.exec(s) || [])[1] || 0);
        return 'limit=' + Math.max(n(a), n(b)) + '\n';
      });
      fs.writeFileSync(f, text);
      git('add', '--', f);
    }
    r = git('rebase', '--continue');
  }
  process.exit(r.status === 0 ? 0 : 1);
}
log({ event: 'build-start' });
fs.writeFileSync(path.join(env.SF_SYNC, epic), '');
const deadline = Date.now() + 20000;
while (fs.readdirSync(env.SF_SYNC).length < 2 && Date.now() < deadline) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 50);
for (const e of JSON.parse(fs.readFileSync(env.SF_EDITS, 'utf8'))[epic]) {
  fs.writeFileSync(e.file, fs.readFileSync(e.file, 'utf8').replace(e.find, e.replace));
}
sf('update', env.SPRINGFIELD_PLAN, env.SPRINGFIELD_STEP, '--all', 'completed');
sf('commit', '-m', 'Build ' + env.SPRINGFIELD_STEP);
log({ event: 'build-end' });
`;

/** Verification: no conflict marker in any tracked file, one limit line, at most SF_MAX_ENTRIES entries in the registry. */
const VERIFY = String.raw`
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
for (const f of execFileSync('git', ['ls-files'], { encoding: 'utf8' }).split('\n').filter(Boolean)) {
  if (!fs.existsSync(f)) continue;
  const text = fs.readFileSync(f, 'utf8');
  if (/^(<{7}|>{7}|={7}$)/m.test(text)) { console.error(f + ': conflict markers'); process.exit(1); }
}
if (fs.existsSync('config.txt') && (fs.readFileSync('config.txt', 'utf8').match(/^limit=/gm) || []).length !== 1) process.exit(1);
const entries = (fs.readFileSync('src/registry.js', 'utf8').match(/^  '/gm) || []).length;
if (entries > Number(process.env.SF_MAX_ENTRIES || 99)) { console.error('too many entries: ' + entries); process.exit(1); }
`;

const REGISTRY = "export const registry = [\n  'alpha',\n  'beta',\n];\n";

interface Edit {
  readonly file: string;
  readonly find: string;
  readonly replace: string;
}

function setUp(
  t: { after: (fn: () => void) => void },
  edits: (slug: string) => Edit[],
  env: Record<string, string> = {},
) {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'sf-conflicts-')));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const repo = join(dir, 'repo');
  mkdirSync(join(repo, 'src'), { recursive: true });
  mkdirSync(join(repo, 'plans'));
  mkdirSync(join(dir, 'sync'));
  writeFileSync(join(repo, 'src', 'registry.js'), REGISTRY);
  writeFileSync(join(repo, 'CHANGELOG.md'), '# Changes\n\n- the registry\n');
  writeFileSync(join(repo, 'config.txt'), 'limit=10\n');
  writeFileSync(join(repo, '.gitignore'), '.springfield/\n');
  for (const slug of ['gamma', 'delta'])
    writeFileSync(
      join(repo, 'plans', `${slug}.md`),
      `# Plan: ${slug}\n\n## Step 1: Register ${slug} {#step-1}\n- [ ] Add ${slug} to the registry and the changelog\n`,
    );
  writeFileSync(join(dir, 'agent.cjs'), AGENT);
  writeFileSync(join(dir, 'verify.cjs'), VERIFY);
  writeFileSync(join(dir, 'agents.log'), '');
  const runEnv: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env))
    if (k !== 'ELECTRON_RUN_AS_NODE' && !/^(VSCODE_|SPRINGFIELD_|GIT_)/.test(k)) runEnv[k] = v;
  Object.assign(runEnv, {
    SF_CLI: CLI_PATH,
    SF_LOG: join(dir, 'agents.log'),
    SF_SYNC: join(dir, 'sync'),
    SF_EDITS: join(dir, 'edits.json'),
    XDG_STATE_HOME: join(dir, 'state'),
    ...env,
  });
  const git = (...a: string[]) => execFileSync('git', a, { cwd: repo, encoding: 'utf8', env: runEnv }).trim();
  git('init', '-q', '-b', 'main');
  git('config', 'user.email', 't@example.com');
  git('config', 'user.name', 't');
  git('add', '-A');
  git('commit', '-qm', 'registry, changelog, plans');
  const sf = (...args: string[]) => {
    const r = spawnSync(process.execPath, [CLI_PATH, ...args, '--json'], {
      cwd: repo,
      encoding: 'utf8',
      env: runEnv,
      timeout: 150_000,
    });
    return {
      code: r.status,
      stdout: r.stdout,
      stderr: r.stderr,
      json: (): unknown => JSON.parse(r.stdout),
    };
  };
  const ids: Record<string, string> = {};
  for (const slug of ['gamma', 'delta']) {
    const created = sf('epic', 'create', `Register ${slug}`, '--complexity', 'trivial', '--planner', 'person');
    assert.equal(created.code, 0, created.stderr);
    ids[slug] = (created.json() as { id: string }).id;
    assert.equal(sf('plan', 'propose', ids[slug], `plans/${slug}.md`, '--agent', 'homer').code, 0);
    assert.equal(sf('plan', 'approve', ids[slug], '--agent', 'marge').code, 0);
  }
  writeFileSync(
    join(dir, 'edits.json'),
    JSON.stringify(Object.fromEntries(Object.entries(ids).map(([slug, id]) => [id, edits(slug)]))),
  );
  writeFileSync(
    join(repo, '.springfield', 'config.json'),
    JSON.stringify({
      roles: { ralph: [process.execPath, join(dir, 'agent.cjs')] },
      verification: [[process.execPath, join(dir, 'verify.cjs')]],
      maxParallelAgents: 2,
      // Built at the same time however busy the machine is: the fleet's admission never holds them.
      admission: ADMIT_ANY_MACHINE,
      retryBackoffSeconds: [0],
      killGraceSeconds: 1,
    }),
  );
  assert.equal(sf('allow').code, 0);
  const records = () =>
    readFileSync(join(dir, 'agents.log'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { event: string; epic: string; at: number; context?: string });
  const orchestrate = () => {
    const r = sf('orchestrate', '--watch', '--until-idle', '--interval', '1');
    assert.equal(r.code, 0, r.stderr);
    return r.stderr;
  };
  return { repo, ids, sf, git, records, orchestrate };
}

/** Both epics' builds were under way at one instant. */
function builtAtOnce(records: readonly { event: string; at: number }[]): boolean {
  const starts = records.filter((r) => r.event === 'build-start').map((r) => r.at);
  const ends = records.filter((r) => r.event === 'build-end').map((r) => r.at);
  return starts.length === 2 && Math.max(...starts) < Math.min(...ends);
}

const registryAndChangelog = (slug: string): Edit[] => [
  { file: 'src/registry.js', find: "  'beta',\n", replace: `  'beta',\n  '${slug}',\n` },
  { file: 'CHANGELOG.md', find: '# Changes\n\n', replace: `# Changes\n\n- ${slug}\n` },
];

test(
  'two epics adding to one registry and one changelog at the same time both merge, with no person and no extra builder session',
  { timeout: 180_000 },
  (t) => {
    const f = setUp(t, registryAndChangelog);
    const log = f.orchestrate();
    const records = f.records();
    assert.ok(builtAtOnce(records), JSON.stringify(records));
    for (const id of Object.values(f.ids)) {
      const shown = f.sf('epic', 'show', id).json() as { status: string; conflicts_at_merge: object };
      assert.equal(shown.status, 'done', log);
    }
    assert.deepEqual(
      records.map((r) => r.event).filter((e) => e !== 'build-start' && e !== 'build-end'),
      [],
      'no conflict session',
    );
    const runs = f.sf('runs', '--limit', '50').json() as { runs: { role: string }[] };
    assert.equal(runs.runs.filter((r) => r.role === 'ralph').length, 2, 'one builder session per epic, no more');
    // The second merge met the conflict and resolved it mechanically; main has both entries, main's first.
    const [first, second] = f.git('log', '--format=%s', '-2', 'main').split('\n').reverse();
    const secondId = Object.values(f.ids).find((id) => second?.includes(id)) as string;
    assert.ok(first && second && secondId, f.git('log', '--oneline', 'main'));
    const body = f.git('log', '-1', '--format=%B', 'main');
    assert.match(body, /Conflicts resolved mechanically:/);
    assert.match(body, /- CHANGELOG\.md: both sides added lines: both kept/);
    assert.match(body, /- src\/registry\.js: both sides added lines: both kept/);
    const registry = f.git('show', 'main:src/registry.js');
    assert.equal((registry.match(/'gamma'/g) ?? []).length, 1);
    assert.equal((registry.match(/'delta'/g) ?? []).length, 1);
    const shown = f.sf('epic', 'show', secondId);
    assert.deepEqual((shown.json() as { conflicts_at_merge: object }).conflicts_at_merge, {
      met: 1,
      mechanical: 1,
      ralph: 0,
      person: 0,
    });
    const text = spawnSync(process.execPath, [CLI_PATH, 'epic', 'show', secondId], { cwd: f.repo, encoding: 'utf8' });
    assert.match(text.stdout, /conflicts at merge: 1 met — 1 resolved mechanically, 0 by Ralph, 0 by a person/);
  },
);

test(
  'a real conflict goes to one Ralph session with both sides in his context, then merges',
  { timeout: 180_000 },
  (t) => {
    const f = setUp(t, (slug) => [
      { file: 'config.txt', find: 'limit=10', replace: `limit=${slug === 'gamma' ? 20 : 30}` },
    ]);
    const log = f.orchestrate();
    for (const id of Object.values(f.ids))
      assert.equal((f.sf('epic', 'show', id).json() as { status: string }).status, 'done', log);
    const sessions = f.records().filter((r) => r.event === 'conflict-session');
    assert.equal(sessions.length, 1, log);
    const context = sessions[0]?.context ?? '';
    assert.match(context, /conflicts in config\.txt/);
    assert.match(context, /Register gamma/);
    assert.match(context, /Register delta/);
    assert.equal(f.git('show', 'main:config.txt'), 'limit=30');
    assert.match(
      f.git('log', '-1', '--format=%B', 'main'),
      /Conflict in config\.txt resolved by Ralph \(one session\)/,
    );
    const second = sessions[0]?.epic as string;
    assert.deepEqual((f.sf('epic', 'show', second).json() as { conflicts_at_merge: object }).conflicts_at_merge, {
      met: 1,
      mechanical: 0,
      ralph: 1,
      person: 0,
    });
  },
);

test(
  'a mechanical resolution that fails verification is undone; Ralph failing too leaves it to a person, once, nothing half-rebased',
  { timeout: 180_000 },
  (t) => {
    // Each epic alone has 3 entries; both together 4, which verification refuses.
    const f = setUp(t, registryAndChangelog, { SF_MAX_ENTRIES: '3', SF_RESOLVER: 'fail' });
    const log = f.orchestrate();
    const shown = Object.values(f.ids).map(
      (id) =>
        f.sf('epic', 'show', id).json() as { id: string; status: string; status_reason: string; worktree_path: string },
    );
    const blocked = shown.filter((e) => e.status === 'blocked');
    assert.equal(blocked.length, 1, log);
    assert.equal(shown.filter((e) => e.status === 'done').length, 1, log);
    const epic = blocked[0] as (typeof shown)[number];
    assert.match(
      epic.status_reason,
      /^merge_failed: rebasing onto main: the mechanical resolution of .*src\/registry\.js.* fails verification \(undone\)/,
    );
    assert.match(log, /resolved mechanically — /);
    assert.match(log, /verification FAILED/);
    assert.equal(f.records().filter((r) => r.event === 'conflict-session').length, 1, 'one Ralph session, bounded');
    assert.equal(log.split('\n').filter((l) => l.includes(`${epic.id}: verified → blocked`)).length, 1, log);
    // The branch as the epic left it: its own commits on the old main, no rebase in progress, nothing uncommitted.
    const wt = (...a: string[]) => execFileSync('git', a, { cwd: epic.worktree_path, encoding: 'utf8' }).trim();
    assert.equal(wt('symbolic-ref', '--short', 'HEAD'), `springfield/${epic.id}`);
    assert.notEqual(
      spawnSync('git', ['merge-base', '--is-ancestor', 'main', 'HEAD'], { cwd: epic.worktree_path }).status,
      0,
    );
    assert.equal(existsSync(join(wt('rev-parse', '--absolute-git-dir'), 'rebase-merge')), false);
    assert.equal(wt('status', '--porcelain'), '');
    assert.deepEqual((f.sf('epic', 'show', epic.id).json() as { conflicts_at_merge: object }).conflicts_at_merge, {
      met: 1,
      mechanical: 0,
      ralph: 0,
      person: 1,
    });
  },
);
