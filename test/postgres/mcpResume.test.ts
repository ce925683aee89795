// The agents' tools on PostgreSQL: a claim or signal whose reply is lost and whose server stays away past
// the retry window fails with an unknown outcome; the MCP server (a long-lived process) keeps the
// operation id in memory, and the same tool call with the same input once the server is back returns
// what the lost call did (resumed: true) instead of claiming a second step or recording a second signal
// (docs/postgres-design.md, "Failures, retries, idempotence", "The agents' tools"). The built CLI's `springfield mcp` runs as a real
// process, driven by the MCP SDK client, against a real server through a proxy that cuts the connection
// and then stays away (test/helpers/pgProxy.ts); SPRINGFIELD_PG_CONNECT_TIMEOUT shortens the window.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Store } from '../../src/core/store/index.ts';
import type { Actor, ClaimResult } from '../../src/core/store/types.ts';
import { CLI_PATH, cleanEnv, runCliAsync, type Repo } from '../helpers/gitRepo.ts';
import { postgresForFile } from '../helpers/postgres.ts';
import type { PgProxy } from '../helpers/pgProxy.ts';
import { proxiedRepo } from './proxiedRepo.ts';

const P = 'plans/p.md';
const PLAN = '# Plan: Three\n## Step 1: One\n## Step 2: Two\n## Step 3: Three\n';
const REPO = 'mcp-resume';
const MARGE: Actor = { worktree: '/wt/main', agent: 'marge' };
const pg = postgresForFile({ durability: 'fast' });
let n = 0;

interface Setup {
  repo: Repo;
  proxy: PgProxy;
  direct: Store;
  client: Client;
}

function text(r: unknown): string {
  return ((r as CallToolResult).content ?? []).map((c) => (c.type === 'text' ? c.text : '')).join('\n');
}

async function setup(t: { after(fn: () => unknown): void }): Promise<Setup> {
  const { repo, proxy, direct, env, closeFirst } = await proxiedRepo(t, pg.server, `mcp_resume_${++n}`, REPO, {
    [P]: PLAN,
  });
  const init = await runCliAsync(repo.root, ['init', P], env); // async: the proxy runs in this process
  assert.equal(init.code, 0, init.stderr);
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [CLI_PATH, 'mcp'],
    cwd: repo.root,
    env: cleanEnv(env) as Record<string, string>,
    stderr: 'pipe',
  });
  const client = new Client({ name: 'springfield-test', version: '1.0.0' });
  closeFirst(client); // the MCP server before the proxy and the repository it works in
  await client.connect(transport);
  return { repo, proxy, direct, client };
}

const claimEvents = async (store: Store) =>
  (await store.events({ planPath: P })).filter(
    (e) => e.entity === 'step' && (e.action === 'claim' || e.action === 'reclaim'),
  );
const CLAIM = { name: 'springfield_claim_next_step', arguments: { plan: P } };

test(
  "the claim tool's reply lost after COMMIT, the server away: an error naming the unknown outcome; the same call once it is back returns that step, resumed, claimed once",
  { timeout: 120_000 },
  async (t) => {
    const s = await setup(t);
    const cut = s.proxy.arm('EXECUTE sf_claim', 'after-reply', 'down');
    const lost = await s.client.callTool(CLAIM);
    await cut;
    assert.equal(lost.isError, true, text(lost));
    assert.match(
      text(lost),
      /^database_unreachable: PostgreSQL at \S+ went away while claiming; the outcome is unknown: call springfield_claim_next_step again with the same input \(it picks up where this call stopped\) \(operation [0-9a-f-]{36}, kept by this server\)$/,
    );
    assert.doesNotMatch(text(lost), /same command/, 'no CLI command, which would not know the id');
    const op = /operation ([0-9a-f-]{36})/.exec(text(lost))?.[1];
    assert.deepEqual(
      (await claimEvents(s.direct)).map((e) => e.step_anchor),
      ['step-1'],
      'the server committed it',
    );

    // Still away: the lookup cannot answer, the same id is kept.
    const away = await s.client.callTool(CLAIM);
    assert.equal(away.isError, true, text(away));
    assert.match(
      text(away),
      /is unreachable while looking up the claim whose reply was lost; its outcome is still unknown: call springfield_claim_next_step again with the same input/,
    );
    assert.ok(text(away).includes(`(operation ${op}, kept by this server)`), text(away));

    await s.proxy.up();
    const back = await s.client.callTool({ name: CLAIM.name, arguments: { plan: P } });
    assert.notEqual(back.isError, true, text(back));
    const c = (back.structuredContent as { result: ClaimResult }).result;
    assert.ok(c.claimed);
    assert.deepEqual([c.step_anchor, c.claim_token, c.agent, c.resumed], ['step-1', 1, 'agent-a', true]);
    assert.match(
      text(back),
      /^Resumed the claim an earlier call made \(its reply was lost\): step-1 is yours\. Claimed step-1 \(One\)/,
    );
    assert.deepEqual(
      (await claimEvents(s.direct)).map((e) => e.step_anchor),
      ['step-1'],
      'exactly one claim',
    );

    // Settled and forgotten: the next call is a new claim.
    const next = await s.client.callTool(CLAIM);
    assert.notEqual(next.isError, true, text(next));
    const d = (next.structuredContent as { result: ClaimResult }).result;
    assert.ok(d.claimed);
    assert.deepEqual([d.step_anchor, 'resumed' in d], ['step-2', false]);
    assert.deepEqual(
      (await claimEvents(s.direct)).map((e) => e.step_anchor),
      ['step-1', 'step-2'],
    );
  },
);

test(
  'the claim tool cut before the server got it: the same call once it is back claims normally, once',
  { timeout: 120_000 },
  async (t) => {
    const s = await setup(t);
    const cut = s.proxy.arm('EXECUTE sf_claim', 'before-send', 'down');
    const lost = await s.client.callTool(CLAIM);
    await cut;
    assert.equal(lost.isError, true, text(lost));
    assert.match(text(lost), /call springfield_claim_next_step again with the same input/);
    assert.deepEqual(await claimEvents(s.direct), [], 'nothing committed');
    await s.proxy.up();
    const back = await s.client.callTool(CLAIM);
    assert.notEqual(back.isError, true, text(back));
    const c = (back.structuredContent as { result: ClaimResult }).result;
    assert.ok(c.claimed);
    assert.deepEqual([c.step_anchor, 'resumed' in c], ['step-1', false]);
    assert.deepEqual(
      (await claimEvents(s.direct)).map((e) => e.step_anchor),
      ['step-1'],
      'one claim',
    );
  },
);

test(
  "the signal tool's COMMIT reply lost: the same call once the server is back returns that signal and its transition, resumed, recorded once",
  { timeout: 120_000 },
  async (t) => {
    const s = await setup(t);
    const { id } = await s.direct.createEpic({ title: 'Review me', brief: '', priority: 'P2' }, MARGE);
    for (const e of ['plan_approved', 'start', 'steps_completed'] as const)
      await s.direct.applyEpicEvent(id, e, MARGE, e);
    const call = {
      name: 'springfield_record_signal',
      arguments: { epic: id, type: 'implementation_failure', summary: 'the cache is never invalidated', locations: [] },
    };
    const cut = s.proxy.arm('*/ COMMIT', 'after-reply', 'down');
    const lost = await s.client.callTool(call);
    await cut;
    assert.equal(lost.isError, true, text(lost));
    assert.match(text(lost), /the outcome is unknown: call springfield_record_signal again with the same input/);
    const signals = async () => (await s.direct.events({ epicId: id })).filter((e) => e.entity === 'signal');
    assert.equal((await signals()).length, 1, 'it committed');
    await s.proxy.up();
    const back = await s.client.callTool(call);
    assert.notEqual(back.isError, true, text(back));
    const r = (
      back.structuredContent as { result: { resumed?: boolean; transition: { from: string; to: string } | null } }
    ).result;
    assert.deepEqual([r.resumed, r.transition?.from, r.transition?.to], [true, 'implemented', 'in_progress']);
    assert.match(text(back), /\(by an earlier call whose reply was lost\)\.$/);
    assert.equal((await signals()).length, 1, 'recorded once');
  },
);
