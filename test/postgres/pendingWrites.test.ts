// `signal`, `epic create` and `plan propose` whose COMMIT reply is lost, the server then staying away past
// the retry window, are handed to the next run of the same command through
// <worktree's git dir>/springfield/pending.json as `claim` and `artifact` are (pendingClaim.test.ts): the
// retry returns the first result (resumed) and the database holds it once; a write cut before the
// server got its COMMIT is done once by the retry (docs/postgres-design.md, "Failures, retries, idempotence", "Retrying from a new
// process"). The built CLI runs as a real process against a real server through the cutting proxy.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Store } from '../../src/core/store/index.ts';
import type { EpicRow, ProposeResult, SignalResult } from '../../src/core/store/epicTypes.ts';
import type { Actor } from '../../src/core/store/types.ts';
import { ensureCli, makeRepo, runCli, runCliAsync } from '../helpers/gitRepo.ts';
import { postgresForFile } from '../helpers/postgres.ts';
import { proxiedRepo, type ProxiedRepo } from './proxiedRepo.ts';

const P = 'plans/p.md';
const PLAN = '# Plan: Three\n## Step 1: One\n## Step 2: Two\n';
const REPO = 'pending-writes';
const MARGE: Actor = { worktree: '/wt/main', agent: 'marge' };
const pg = postgresForFile({ durability: 'fast' });
let n = 0;

type Setup = ProxiedRepo;
type Run = Awaited<ReturnType<typeof runCliAsync>>;

async function setup(t: { after(fn: () => unknown): void }): Promise<Setup> {
  const s = await proxiedRepo(t, pg.server, `pending_writes_${++n}`, REPO, { [P]: PLAN });
  await s.direct.listEpics(); // the schema exists before the first cut: only the command's own COMMIT carries the marker
  return s;
}

/** Runs `args` while the proxy cuts its COMMIT (`when`) and then stays away: exit 3, the outcome unknown, the id handed over. */
async function lost(
  s: Setup,
  args: readonly string[],
  when: 'before-send' | 'after-reply',
  doing: string,
): Promise<{ op: string; command: string; plan_path: string | null; epic_id: string | null }> {
  const cut = s.proxy.arm('*/ COMMIT', when, 'down');
  const r = await runCliAsync(s.repo.root, [...args], s.env); // async: the proxy runs in this process
  await cut;
  assert.equal(r.code, 3, `${r.stdout}${r.stderr}`);
  assert.match(
    r.stderr,
    new RegExp(
      `^springfield: PostgreSQL at \\S+ went away while ${doing}; the outcome is unknown: .* \\(operation [0-9a-f-]{36}, kept in \\S+pending\\.json\\)\\n$`,
    ),
  );
  assert.equal(statSync(s.pending).mode & 0o777, 0o600);
  const handed = JSON.parse(readFileSync(s.pending, 'utf8')) as {
    op: string;
    command: string;
    plan_path: string | null;
    epic_id: string | null;
    holder: unknown;
  };
  assert.deepEqual(handed.holder, { host: 'host-a', worktree: s.repo.root, agent: 'agent-a' });
  assert.ok(r.stderr.includes(handed.op));
  return handed;
}

/** The server still away: the retry exits 3 again and keeps the file; back: the retry's answer, the file removed. */
async function retry(s: Setup, args: readonly string[], op: string, what: string): Promise<Run> {
  const away = await runCliAsync(s.repo.root, [...args], s.env);
  assert.equal(away.code, 3, away.stderr);
  assert.match(
    away.stderr,
    new RegExp(
      `^springfield: PostgreSQL at \\S+ is unreachable while looking up ${what} whose reply was lost; its outcome is still unknown`,
    ),
  );
  assert.equal(JSON.parse(readFileSync(s.pending, 'utf8')).op, op, 'kept as it was');
  await s.proxy.up();
  const back = await runCliAsync(s.repo.root, [...args], s.env);
  assert.equal(back.code, 0, back.stderr);
  assert.equal(back.stderr, '');
  assert.equal(existsSync(s.pending), false, 'pending.json removed');
  return back;
}

async function implemented(store: Store, title: string): Promise<string> {
  const { id } = await store.createEpic({ title, brief: '', priority: 'P2' }, MARGE);
  for (const e of ['plan_approved', 'start', 'steps_completed'] as const) await store.applyEpicEvent(id, e, MARGE, e);
  return id;
}

test('epic create with its COMMIT reply lost: exit 3 and pending.json; the same command again returns that epic, resumed, and there is one', async (t) => {
  const s = await setup(t);
  const args = ['epic', 'create', 'Lost reply', '--brief', 'what it is', '--json'];
  const handed = await lost(s, args, 'after-reply', 'creating the epic');
  assert.deepEqual([handed.command, handed.plan_path, handed.epic_id], ['epic create', null, null]);
  const [committed, ...more] = await s.direct.listEpics();
  assert.deepEqual([committed?.title, more.length], ['Lost reply', 0], 'it committed');
  const back = await retry(s, args, handed.op, 'the epic');
  const e = back.json<EpicRow & { resumed?: boolean }>();
  assert.deepEqual([e.id, e.title, e.status, e.resumed], [committed?.id, 'Lost reply', 'planned', true]);
  assert.equal((await s.direct.listEpics()).length, 1, 'exactly one epic');
  assert.equal(
    (await s.direct.events({ epicId: e.id })).filter((ev) => ev.entity === 'epic' && ev.action === 'create').length,
    1,
  );

  // Another title is another epic: a lost one is not returned for it (the lookup compares the title).
  const other = await lost(s, ['epic', 'create', 'Second'], 'after-reply', 'creating the epic');
  await s.proxy.up();
  const third = await runCliAsync(s.repo.root, ['epic', 'create', 'Third', '--json'], s.env);
  assert.equal(third.code, 0, third.stderr);
  assert.equal('resumed' in third.json<object>(), false);
  assert.deepEqual((await s.direct.listEpics()).map((x) => x.title).sort(), ['Lost reply', 'Second', 'Third']);
  assert.equal(existsSync(s.pending), false, `settled: ${other.op}`);
});

test('epic create cut before the server got its COMMIT: exit 3 and pending.json; the retry creates it once', async (t) => {
  const s = await setup(t);
  const args = ['epic', 'create', 'Never committed', '--json'];
  await lost(s, args, 'before-send', 'creating the epic');
  assert.deepEqual(await s.direct.listEpics(), [], 'nothing committed');
  await s.proxy.up();
  const r = await runCliAsync(s.repo.root, args, s.env);
  assert.equal(r.code, 0, r.stderr);
  const e = r.json<EpicRow & { resumed?: boolean }>();
  assert.deepEqual([e.title, 'resumed' in e], ['Never committed', false]);
  assert.deepEqual(
    (await s.direct.listEpics()).map((x) => x.id),
    [e.id],
    'one epic',
  );
  assert.equal(existsSync(s.pending), false);
});

test('plan propose with its COMMIT reply lost: the same command again returns that version, resumed, and there is one version', async (t) => {
  const s = await setup(t);
  const { id } = await s.direct.createEpic({ title: 'Propose me', brief: '', priority: 'P2' }, MARGE);
  const args = ['plan', 'propose', id, P, '--json'];
  const handed = await lost(s, args, 'after-reply', 'proposing the plan');
  assert.deepEqual([handed.command, handed.plan_path, handed.epic_id], ['plan propose', P, id]);
  assert.equal((await s.direct.planVersions(id)).length, 1, 'it committed');
  const back = await retry(s, args, handed.op, 'the proposal');
  const r = back.json<ProposeResult>();
  const [v] = await s.direct.planVersions(id);
  assert.deepEqual(
    [r.epic_id, r.plan_path, r.version, r.plan_hash, r.plan_iteration, r.changes_since_previous, r.resumed],
    [id, P, 1, v?.plan_hash, 1, [], true],
  );
  assert.deepEqual(
    (await s.direct.planVersions(id)).map((x) => `${x.version} ${x.status}`),
    ['1 proposed'],
    'exactly one version',
  );
  assert.equal((await s.direct.getEpic(id)).plan_iteration, 1, 'one planning iteration counted');

  // For people: the plain line says an earlier run made it.
  const text = await lost(s, ['plan', 'propose', id, P], 'after-reply', 'proposing the plan');
  await s.proxy.up();
  const again = await runCliAsync(s.repo.root, ['plan', 'propose', id, P], s.env);
  assert.equal(again.code, 0, again.stderr);
  assert.match(
    again.stdout,
    new RegExp(
      `^Proposed plans/p\\.md as version 2 of ${id}'s plan \\(planning iteration 2\\) \\(by an earlier run whose reply was lost\\)\\n`,
    ),
  );
  assert.deepEqual(
    (await s.direct.planVersions(id)).map((x) => `${x.version} ${x.status}`),
    ['1 superseded', '2 proposed'],
  );
  assert.equal(existsSync(s.pending), false, `settled: ${text.op}`);
});

test('signal with its COMMIT reply lost: the same command again returns that signal (and the transition it applied), resumed, recorded once', async (t) => {
  const s = await setup(t);
  const id = await implemented(s.direct, 'Review me');
  const wait = [
    'signal',
    id,
    '--type',
    'implementation_failure',
    '--summary',
    'off by one',
    '--location',
    `${P}:2`,
    '--await-person',
    '--json',
  ];
  const handed = await lost(s, wait, 'after-reply', 'recording the signal');
  assert.deepEqual([handed.command, handed.plan_path, handed.epic_id], ['signal', null, id]);
  assert.equal((await s.direct.signals(id)).length, 1, 'it committed');
  const back = await retry(s, wait, handed.op, 'the signal');
  const r = back.json<SignalResult>();
  const [stored, ...more] = await s.direct.signals(id);
  assert.deepEqual(
    [r.signal_id, r.type, r.locations, r.awaiting_person, r.transition, r.resumed, more.length],
    [stored?.id, 'implementation_failure', 1, true, null, true, 0],
    'exactly one signal',
  );

  // One that moves the epic: the transition is rebuilt from its event, and the epic moved once.
  const other = await implemented(s.direct, 'Review me too');
  const send = ['signal', other, '--type', 'pass', '--summary', 'fine', '--json'];
  const moved = await lost(s, send, 'after-reply', 'recording the signal');
  const m = (await retry(s, send, moved.op, 'the signal')).json<SignalResult>();
  assert.deepEqual(
    [m.type, m.resumed, m.transition?.from, m.transition?.to, m.transition?.event, m.transition?.reason],
    ['pass', true, 'implemented', 'verified', 'signal_pass', 'pass: fine'],
  );
  assert.equal((await s.direct.getEpic(other)).status, 'verified');
  assert.deepEqual(
    (await s.direct.signals(other)).map((x) => x.id),
    [m.signal_id],
    'one signal',
  );
  assert.equal(
    (await s.direct.events({ epicId: other })).filter((e) => e.action === 'signal_pass').length,
    1,
    'one move',
  );
});

test('on SQLite epic create and plan propose neither read nor write the hand-over file', () => {
  ensureCli();
  const repo = makeRepo({ files: { [P]: PLAN } });
  try {
    const env = { SPRINGFIELD_AGENT: 'agent-a' };
    const pending = join(repo.root, '.git', 'springfield', 'pending.json');
    mkdirSync(join(repo.root, '.git', 'springfield'), { recursive: true });
    writeFileSync(pending, 'garbage', { mode: 0o600 });
    const e = runCli(repo.root, ['epic', 'create', 'On SQLite', '--json'], env);
    assert.equal(e.code, 0, e.stderr);
    assert.equal(e.stderr, '', 'no warning: the file is not read');
    const p = runCli(repo.root, ['plan', 'propose', e.json<EpicRow>().id, P, '--json'], env);
    assert.equal(p.code, 0, p.stderr);
    assert.equal(p.stderr, '');
    assert.equal('resumed' in p.json<object>(), false);
    assert.equal(readFileSync(pending, 'utf8'), 'garbage');
  } finally {
    repo.cleanup();
  }
});
