// A claim whose reply is lost and whose process gives up (the server stays away past the retry window)
// is handed to the next run of the same command through <worktree's git dir>/springfield/pending.json:
// that run returns the step the lost claim holds (resumed) instead of claiming a second one, or claims
// normally when nothing committed (docs/postgres-design.md, "Failures, retries, idempotence", "Retrying from a new process"). The
// built CLI runs as a real process against a real server through a proxy that cuts the connection
// and then stays away (test/helpers/pgProxy.ts); SPRINGFIELD_PG_CONNECT_TIMEOUT shortens the window.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  existsSync,
  lstatSync,
  mkdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import type { Store } from '../../src/core/store/index.ts';
import type { ClaimResult } from '../../src/core/store/types.ts';
import { ensureCli, makeRepo, runCli, runCliAsync } from '../helpers/gitRepo.ts';
import { postgresForFile } from '../helpers/postgres.ts';
import { proxiedRepo, type ProxiedRepo } from './proxiedRepo.ts';

const P = 'plans/p.md';
const PLAN = '# Plan: Three\n## Step 1: One\n## Step 2: Two\n## Step 3: Three\n';
const REPO = 'pending-claim';
const pg = postgresForFile({ durability: 'fast' });
let n = 0;

type Setup = ProxiedRepo;

async function setup(t: { after(fn: () => unknown): void }): Promise<Setup> {
  const s = await proxiedRepo(t, pg.server, `pending_${++n}`, REPO, { [P]: PLAN });
  const init = await runCliAsync(s.repo.root, ['init', P], s.env); // async: the proxy runs in this process
  assert.equal(init.code, 0, init.stderr);
  return s;
}

const claimEvents = async (store: Store) =>
  (await store.events({ planPath: P })).filter(
    (e) => e.entity === 'step' && (e.action === 'claim' || e.action === 'reclaim'),
  );

/** Runs `claim` while the proxy cuts it (`when`) and stays away: exit 3, the outcome unknown. */
async function lostClaim(
  s: Setup,
  when: 'before-send' | 'after-reply',
  env: Record<string, string> = s.env,
  json = true,
) {
  const cut = s.proxy.arm('EXECUTE sf_claim', when, 'down');
  const r = await runCliAsync(s.repo.root, ['claim', P, ...(json ? ['--json'] : [])], env);
  await cut;
  assert.equal(r.code, 3, `${r.stdout}${r.stderr}`);
  assert.ok(!r.stderr.includes('    at '), 'no stack trace');
  return r;
}

test('a claim committed with its reply lost, the server away past the window: exit 3 and pending.json; the same command again returns that step, resumed', async (t) => {
  const s = await setup(t);
  const r = await lostClaim(s, 'after-reply');
  assert.match(
    r.stderr,
    /^springfield: PostgreSQL at \S+ went away while claiming; the outcome is unknown: run the same command again \(it picks up where this one stopped\) \(operation [0-9a-f-]{36}, kept in \S+pending\.json\)\n$/,
  );
  assert.equal(r.json<{ error: { code: string } }>().error.code, 'database_unreachable');
  assert.equal(statSync(s.pending).mode & 0o777, 0o600);
  const handed = JSON.parse(readFileSync(s.pending, 'utf8')) as {
    op: string;
    command: string;
    plan_path: string;
    holder: unknown;
    at: string;
  };
  assert.deepEqual(
    [handed.command, handed.plan_path, handed.holder],
    ['claim', P, { host: 'host-a', worktree: s.repo.root, agent: 'agent-a' }],
  );
  assert.ok(r.stderr.includes(handed.op));
  // The server committed it: step-1 is held, by one claim, whose event carries the handed-over id.
  const [event] = await claimEvents(s.direct);
  assert.equal((await claimEvents(s.direct)).length, 1);
  assert.equal(event?.step_anchor, 'step-1');

  // Still away: exit 3 again, the file kept as it was.
  const again = await runCliAsync(s.repo.root, ['claim', P, '--json'], s.env);
  assert.equal(again.code, 3, again.stderr);
  assert.match(
    again.stderr,
    /^springfield: PostgreSQL at \S+ is unreachable while looking up the claim whose reply was lost; its outcome is still unknown: run the same command again/,
  );
  assert.equal(JSON.parse(readFileSync(s.pending, 'utf8')).op, handed.op);

  await s.proxy.up();
  const resumed = await runCliAsync(s.repo.root, ['claim', P, '--json'], s.env);
  assert.equal(resumed.code, 0, resumed.stderr);
  assert.equal(resumed.stderr, '');
  const c = resumed.json<ClaimResult>();
  assert.ok(c.claimed);
  assert.deepEqual(
    [c.step_anchor, c.claim_token, c.claimed_by, c.agent, c.resumed, c.remaining_ready],
    ['step-1', 1, s.repo.root, 'agent-a', true, 2],
  );
  assert.deepEqual(
    (await claimEvents(s.direct)).map((e) => e.step_anchor),
    ['step-1'],
    'exactly one claim',
  );
  assert.equal(existsSync(s.pending), false, 'pending.json removed');
  // The resumed claim is the holder's: it completes with the token it returned.
  const done = await runCliAsync(
    s.repo.root,
    ['complete', P, 'step-1', '--token', String(c.claim_token), '--force', 'test'],
    s.env,
  );
  assert.equal(done.code, 0, done.stderr);

  // Once more for people: the plain line says the claim was picked up.
  await lostClaim(s, 'after-reply', s.env, false);
  await s.proxy.up();
  const text = await runCliAsync(s.repo.root, ['claim', P], s.env);
  assert.equal(text.code, 0, text.stderr);
  assert.match(
    text.stdout,
    /^Resumed the claim an earlier run made \(its reply was lost\): step-2 is yours\.\nClaimed step-2: Two\n/,
  );
  assert.deepEqual(
    (await claimEvents(s.direct)).map((e) => e.step_anchor),
    ['step-1', 'step-2'],
  );
  assert.equal(existsSync(s.pending), false);
});

test('a claim cut before the server received it: exit 3 and pending.json; the same command again claims normally, once', async (t) => {
  const s = await setup(t);
  await lostClaim(s, 'before-send');
  assert.ok(existsSync(s.pending));
  assert.deepEqual(await claimEvents(s.direct), [], 'nothing committed');
  await s.proxy.up();
  const r = await runCliAsync(s.repo.root, ['claim', P, '--json'], s.env);
  assert.equal(r.code, 0, r.stderr);
  const c = r.json<ClaimResult>();
  assert.ok(c.claimed);
  assert.deepEqual([c.step_anchor, c.claim_token, 'resumed' in c], ['step-1', 1, false]);
  assert.deepEqual(
    (await claimEvents(s.direct)).map((e) => e.step_anchor),
    ['step-1'],
    'one claim',
  );
  assert.equal(existsSync(s.pending), false);
  // The window is a documented setting: a value that is not seconds is refused before anything is sent.
  const bad = await runCliAsync(s.repo.root, ['claim', P, '--json'], {
    ...s.env,
    SPRINGFIELD_PG_CONNECT_TIMEOUT: '1s',
  });
  assert.equal(bad.code, 2, bad.stderr);
  assert.equal(
    bad.stderr,
    "springfield: SPRINGFIELD_PG_CONNECT_TIMEOUT: expected seconds between 0 and 3600, got '1s'\n",
  );
  assert.equal((await claimEvents(s.direct)).length, 1);
});

test("another agent's pending.json is ignored with a warning, kept for that agent, who then resumes its own claim", async (t) => {
  const s = await setup(t);
  const b = { ...s.env, SPRINGFIELD_AGENT: 'agent-b' };
  await lostClaim(s, 'after-reply', b);
  await s.proxy.up();
  const handed = readFileSync(s.pending, 'utf8');
  const a = await runCliAsync(s.repo.root, ['claim', P, '--json'], s.env);
  assert.equal(a.code, 0, a.stderr);
  assert.match(
    a.stderr,
    /^springfield: warning: ignoring \S+pending\.json: it is for 'claim plans\/p\.md' by host-a:\S+ \(agent-b\), not this command and holder\n$/,
  );
  const ca = a.json<ClaimResult>();
  assert.ok(ca.claimed);
  assert.deepEqual([ca.step_anchor, 'resumed' in ca], ['step-2', false], "agent-a claims its own step, not agent-b's");
  assert.equal(readFileSync(s.pending, 'utf8'), handed, 'left for its holder');
  const rb = await runCliAsync(s.repo.root, ['claim', P, '--json'], b);
  assert.equal(rb.code, 0, rb.stderr);
  const cb = rb.json<ClaimResult>();
  assert.ok(cb.claimed);
  assert.deepEqual([cb.step_anchor, cb.agent, cb.resumed], ['step-1', 'agent-b', true]);
  assert.deepEqual(
    (await claimEvents(s.direct)).map((e) => `${e.step_anchor} ${e.agent}`),
    ['step-1 agent-b', 'step-2 agent-a'],
  );
  assert.equal(existsSync(s.pending), false);
});

test('a planted link at pending.json is neither read nor written through; garbage there is ignored with a warning', async (t) => {
  const s = await setup(t);
  mkdirSync(join(s.repo.root, '.git', 'springfield'), { recursive: true });
  // The link points at what would be a valid hand-over for this holder, naming an operation id.
  const target = join(s.repo.tmp, 'elsewhere.json');
  const planted = JSON.stringify({
    v: 1,
    op: '00000000-0000-4000-8000-000000000000',
    command: 'claim',
    plan_path: P,
    holder: { host: 'host-a', worktree: s.repo.root, agent: 'agent-a' },
    at: new Date().toISOString(),
  });
  writeFileSync(target, planted);
  symlinkSync(target, s.pending);
  const r = await lostClaim(s, 'after-reply');
  assert.match(r.stderr, /^springfield: warning: ignoring \S+pending\.json: it is a symbolic link\n/);
  assert.match(
    r.stderr,
    /could not be handed over \(\S+pending\.json: cannot record the pending operation \(a file or link is already there\)\), so running it again may claim a second step\n$/,
  );
  assert.ok(lstatSync(s.pending).isSymbolicLink(), 'the link is left as it was');
  assert.equal(readFileSync(target, 'utf8'), planted, 'nothing written through it');
  await s.proxy.up();

  // A dangling link: nothing created at its target either.
  const dangling = join(s.repo.tmp, 'created-through-link.json');
  unlinkSync(s.pending);
  symlinkSync(dangling, s.pending);
  await lostClaim(s, 'after-reply');
  assert.equal(existsSync(dangling), false, 'no file made through a dangling link');
  await s.proxy.up();

  unlinkSync(s.pending);
  writeFileSync(s.pending, 'not json at all', { mode: 0o600 });
  const g = await runCliAsync(s.repo.root, ['claim', P, '--json'], s.env);
  assert.equal(g.code, 0, g.stderr);
  assert.equal(g.stderr, `springfield: warning: ignoring ${s.pending}: not JSON\n`);
  assert.equal(readFileSync(s.pending, 'utf8'), 'not json at all', 'left alone');
});

test('an artifact whose COMMIT reply is lost is handed over the same way: the retry returns it, recorded once', async (t) => {
  const s = await setup(t);
  const claim = await runCliAsync(s.repo.root, ['claim', P, '--json'], s.env);
  assert.equal(claim.code, 0, claim.stderr);
  const args = ['artifact', P, 'step-1', '--kind', 'note', '--summary', 'looked at it', '--json'];
  const cut = s.proxy.arm('*/ COMMIT', 'after-reply', 'down');
  const lost = await runCliAsync(s.repo.root, args, s.env);
  await cut;
  assert.equal(lost.code, 3, lost.stderr);
  assert.match(
    lost.stderr,
    /^springfield: PostgreSQL at \S+ went away while recording the artifact; the outcome is unknown: .* \(operation [0-9a-f-]{36}, kept in \S+pending\.json\)\n$/,
  );
  assert.equal(JSON.parse(readFileSync(s.pending, 'utf8')).command, 'artifact');
  const artifacts = async () => (await s.direct.events({ planPath: P })).filter((e) => e.entity === 'artifact');
  assert.equal((await artifacts()).length, 1, 'it committed');
  await s.proxy.up();
  const again = await runCliAsync(s.repo.root, args, s.env);
  assert.equal(again.code, 0, again.stderr);
  const r = again.json<{ artifact_id: number; kind: string; resumed?: boolean }>();
  assert.deepEqual(
    [r.kind, r.resumed, r.artifact_id],
    ['note', true, ((await artifacts())[0]?.data as { artifact_id?: number } | undefined)?.artifact_id],
  );
  assert.equal((await artifacts()).length, 1, 'recorded once');
  assert.equal(existsSync(s.pending), false);
});

test('on SQLite the hand-over file is neither read nor written', () => {
  ensureCli();
  const repo = makeRepo({ files: { [P]: PLAN } });
  try {
    const env = { SPRINGFIELD_AGENT: 'agent-a' };
    assert.equal(runCli(repo.root, ['init', P], env).code, 0);
    const pending = join(repo.root, '.git', 'springfield', 'pending.json');
    mkdirSync(join(repo.root, '.git', 'springfield'), { recursive: true });
    writeFileSync(pending, 'garbage', { mode: 0o600 });
    const r = runCli(repo.root, ['claim', P, '--json'], env);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stderr, '', 'no warning: the file is not read');
    assert.equal(r.json<ClaimResult>().claimed, true);
    assert.equal(readFileSync(pending, 'utf8'), 'garbage');
  } finally {
    repo.cleanup();
  }
});
