// `springfield review`: a person's line comments on an epic's branch, then request changes (back to
// Ralph, whose next context carries each comment at its place) or approve (a pass; for a critical
// epic the merge approval too). Real git: the branch forks from main, main moves on, and only what the
// branch changes can be commented on. Bad input is refused with exit 2 and nothing is written.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadSqlite } from '../../src/core/store/sqlite/sqlite.ts';
import type { ReviewResult } from '../../src/core/review/personReview.ts';
import type { EventView, SignalView } from '../../src/core/store/index.ts';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import {
  assertFails,
  assertOk,
  CLI_PATH,
  cleanEnv,
  ensureCli,
  makeRepo,
  runCliAsync,
  type CliResult,
  type Repo,
} from '../helpers/gitRepo.ts';
import { runCli } from '../helpers/cliInProcess.ts';

const PLAN = '# Plan: Cache reads\n\n## Step 1: Only {#step-1}\n**Tasks:**\n- [ ] Do it\n';
const APP = Array.from({ length: 10 }, (_, i) => `export const v${i} = ${i};\n`).join('');
const CACHE = 'export const cache = {};\nexport function get(k) {\n  return cache[k];\n}\n';
/** Shell syntax in a comment is text: stored and shown as typed, never run. */
const SHELLY = 'Why `touch pwned` and $(touch pwned2) here?';

let repo: Repo;

before(() => {
  ensureCli();
  repo = makeRepo({
    files: {
      '.gitignore': '.springfield/\n',
      'plans/README.md': 'Plans.\n',
      'src/app.ts': APP,
      'src/old.ts': 'export const old = 1;\n',
    },
  });
});
after(() => repo.cleanup());

async function sf(
  args: readonly string[],
  cwd = repo.root,
  env: Readonly<Record<string, string | undefined>> = {},
): Promise<CliResult> {
  return await runCli(cwd, [...args, '--json'], env);
}

/** An epic built to `implemented` in its own worktree: it adds src/cache.ts, changes src/app.ts and deletes src/old.ts; then main moves on. */
async function implementedEpic(title: string, complexity = 'standard'): Promise<{ id: string; wt: string }> {
  const id = assertOk<{ id: string }>(await sf(['epic', 'create', title, '--complexity', complexity])).id;
  // A plan belongs to one epic: each gets its own file.
  const plan = `plans/${id}.md`;
  writeFileSync(join(repo.root, plan), PLAN);
  assertOk(await sf(['plan', 'propose', id, plan]));
  assertOk(await sf(['plan', 'approve', id]));
  const wt = assertOk<{ worktree_path: string }>(await sf(['epic', 'start', id])).worktree_path;
  assertOk(await sf(['claim', plan], wt));
  assertOk(await sf(['update', plan, 'step-1', '--all', 'completed'], wt));
  writeFileSync(join(wt, 'src', 'cache.ts'), CACHE);
  writeFileSync(join(wt, 'src', 'app.ts'), APP.replace('v3 = 3', 'v3 = cached(3)'));
  repo.git(['rm', '-q', 'src/old.ts'], wt);
  assertOk(await sf(['commit', '-m', 'Cache reads', '--step', 'step-1'], wt));
  assertOk(await sf(['epic', 'finish', id]));
  // main moves on after the branch forked: its README change is not the epic's.
  writeFileSync(join(repo.root, 'README.md'), `# fixture\n\nmoved on while ${id} was built\n`);
  repo.git(['commit', '-qam', `main moves on past ${id}`]);
  return { id, wt };
}

/** Every row a review could touch, for "nothing was written". */
function tables(): string {
  const db = new (loadSqlite())(join(repo.root, '.springfield', 'state.db'), { readonly: true });
  try {
    return JSON.stringify(
      ['epics', 'signals', 'signal_locations', 'events'].map((t) =>
        db.prepare(`SELECT * FROM ${t} ORDER BY rowid`).all(),
      ),
    );
  } finally {
    db.close();
  }
}

describe('review: bad input is refused with exit 2, nothing written', () => {
  let epic: string;
  before(async () => {
    epic = (await implementedEpic('Bad input')).id;
  });
  const cases: readonly [string, readonly string[], string, RegExp][] = [
    [
      'neither --request-changes nor --approve',
      ['--comment', 'src/cache.ts:1:x'],
      'missing_option',
      /exactly one of --request-changes or --approve/,
    ],
    ['both', ['--request-changes', '--approve', '--comment', 'src/cache.ts:1:x'], 'missing_option', /exactly one/],
    [
      'a comment without a line',
      ['--request-changes', '--comment', 'src/cache.ts:looks wrong'],
      'bad_location',
      /FILE:LINE\[:END\]:TEXT/,
    ],
    [
      'a comment without text',
      ['--request-changes', '--comment', 'src/cache.ts:2:  '],
      'missing_value',
      /src\/cache\.ts:2: the comment text is empty/,
    ],
    ['line 0', ['--request-changes', '--comment', 'src/cache.ts:0:x'], 'bad_location', /lines start at 1/],
    [
      'an end before its start',
      ['--request-changes', '--comment', 'src/cache.ts:3:2:x'],
      'bad_location',
      /end line is before/,
    ],
    [
      'a file the branch does not change (main changed it)',
      ['--request-changes', '--comment', 'README.md:1:x'],
      'not_in_changes',
      /^README\.md is not changed on springfield\/(sf-[0-9a-f]+) \(it changes plans\/\1\.md, src\/app\.ts, src\/cache\.ts\)$/,
    ],
    [
      'a file the branch deletes',
      ['--request-changes', '--comment', 'src/old.ts:1:x'],
      'not_in_changes',
      /src\/old\.ts is deleted on springfield\//,
    ],
    [
      'a line past the end of the file',
      ['--request-changes', '--comment', 'src/cache.ts:2:x', '--comment', 'src/cache.ts:3:9:x'],
      'bad_location',
      /src\/cache\.ts:9: the file has 4 lines on springfield\//,
    ],
    [
      'a path outside the repository',
      ['--request-changes', '--comment', '../elsewhere.ts:1:x'],
      'location_outside_repository',
      /outside the repository/,
    ],
    ['request changes with nothing to say', ['--request-changes'], 'missing_value', /at least one comment/],
    ['an empty summary', ['--approve', '--summary', ' '], 'missing_value', /summary is empty/],
  ];
  for (const [name, args, code, message] of cases) {
    test(`${name} → ${code}`, async () => {
      const before = tables();
      const err = assertFails(await sf(['review', epic, ...args]), 2, code);
      assert.match(err.message, message);
      assert.equal(tables(), before, 'nothing written');
    });
  }
  test('an unknown epic → exit 2 unknown_epic', async () => {
    const before = tables();
    assertFails(await sf(['review', 'sf-0000', '--approve']), 2, 'unknown_epic');
    assert.equal(tables(), before);
  });
  test('an epic still in progress → exit 1 not_reviewable, nothing written', async () => {
    const id = assertOk<{ id: string }>(await sf(['epic', 'create', 'Not yet'])).id;
    writeFileSync(join(repo.root, 'plans', `${id}.md`), PLAN);
    assertOk(await sf(['plan', 'propose', id, `plans/${id}.md`]));
    assertOk(await sf(['plan', 'approve', id]));
    assertOk(await sf(['epic', 'start', id]));
    const before = tables();
    const err = assertFails(await sf(['review', id, '--request-changes', '--summary', 'no']), 1, 'not_reviewable');
    assert.equal(err.message, `${id} is in progress: a person reviews its changes once it is implemented or verified`);
    assert.equal(tables(), before);
  });
});

describe('review: request changes sends Ralph back with each comment at its place', () => {
  let epic: { id: string; wt: string };
  let result: ReviewResult;
  before(async () => {
    epic = await implementedEpic('Cache reads');
    result = assertOk<ReviewResult>(
      await sf(
        [
          'review',
          epic.id,
          '--request-changes',
          '--comment',
          'src/cache.ts:1:Use a Map, not a plain object',
          '--comment',
          `src/app.ts:4:6:${SHELLY}`,
        ],
        epic.wt,
      ),
    );
  });

  test('the epic is back in progress with Ralph next, recorded as the person', async () => {
    assert.deepEqual(
      [result.decision, result.reviewer, result.comments, result.merge_approved],
      ['request_changes', 'marge', 2, false],
    );
    assert.deepEqual(
      [result.transition?.from, result.transition?.to, result.transition?.next_role, result.transition?.iteration],
      ['implemented', 'in_progress', 'ralph', 2],
    );
    assert.equal(result.summary, 'Changes requested in review: Use a Map, not a plain object (+1 more)');
    assert.equal(assertOk<{ status: string }>(await sf(['epic', 'show', epic.id])).status, 'in_progress');
  });

  test("the signal holds every comment as a location with its note, typed as the person's", async () => {
    const [signal] = assertOk<{ signals: SignalView[] }>(await sf(['signals', epic.id])).signals;
    assert.deepEqual(
      [signal?.type, signal?.created_by, signal?.status],
      ['implementation_failure', 'marge', 'applied'],
    );
    assert.deepEqual(signal?.locations, [
      { file: 'src/cache.ts', line: 1, end_line: null, note: 'Use a Map, not a plain object' },
      { file: 'src/app.ts', line: 4, end_line: 6, note: SHELLY },
    ]);
    assert.equal(
      existsSync(join(epic.wt, 'pwned')) || existsSync(join(epic.wt, 'pwned2')) || existsSync(join(repo.root, 'pwned')),
      false,
      'nothing in a comment ran',
    );
  });

  test("the event log tells the person's review from Bart's: the transition is marge's", async () => {
    const events = assertOk<{ events: EventView[] }>(await sf(['events', '--epic', epic.id])).events;
    const sentBack = events.filter((e) => e.entity === 'epic' && e.action === 'signal_implementation_failure');
    assert.deepEqual(
      sentBack.map((e) => [e.agent, e.from_status, e.to_status, e.reason]),
      [['marge', 'implemented', 'in_progress', `implementation_failure: ${result.summary}`]],
    );
  });

  test("Ralph's next context, in the epic's worktree, carries each comment with its file:line and text", async () => {
    const r = await runCli(epic.wt, ['context', '--role', 'ralph', '--epic', epic.id]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(
      r.stdout,
      new RegExp(`^# You are Ralph, the builder: fix epic ${epic.id}`),
      "Ralph's fix-up prompt comes first",
    );
    const signals = r.stdout.slice(r.stdout.indexOf('## Review signals'));
    assert.ok(signals.startsWith('## Review signals\n'), r.stdout);
    assert.equal(
      signals.split('\n').slice(0, 4).join('\n'),
      [
        '## Review signals',
        `- implementation_failure (by marge): ${result.summary}`,
        '  - src/cache.ts:1 — Use a Map, not a plain object',
        `  - src/app.ts:4-6 — ${SHELLY}`,
      ].join('\n'),
    );
  });

  test(
    'an agent reads the review through MCP: springfield_context shows each comment at its place',
    { timeout: 30_000 },
    async (t) => {
      const transport = new StdioClientTransport({
        command: process.execPath,
        args: [CLI_PATH, 'mcp'],
        cwd: epic.wt,
        env: cleanEnv({ SPRINGFIELD_AGENT: 'claude' }) as Record<string, string>,
        stderr: 'pipe',
      });
      const client = new Client({ name: 'springfield-review-test', version: '1.0.0' });
      await client.connect(transport);
      t.after(() => client.close());
      const r = (await client.callTool({
        name: 'springfield_context',
        arguments: { epic: epic.id },
      })) as CallToolResult;
      const text = r.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');
      assert.match(
        text,
        /- implementation_failure \(by marge\): Changes requested in review: Use a Map, not a plain object \(\+1 more\)\n {2}- src\/cache\.ts:1 — Use a Map, not a plain object\n {2}- src\/app\.ts:4-6 — Why/,
      );
    },
  );

  test("after a fix and a finish, Approve with the person's own agent id passes review: a pass signal, recorded as theirs", async () => {
    writeFileSync(join(epic.wt, 'src', 'cache.ts'), CACHE.replace('{}', 'new Map()'));
    repo.git(['commit', '-qam', 'Use a Map'], epic.wt);
    assertOk(await sf(['epic', 'finish', epic.id]));
    const r = assertOk<ReviewResult>(await sf(['review', epic.id, '--approve', '--agent', 'alice']));
    assert.deepEqual(
      [r.decision, r.reviewer, r.transition?.from, r.transition?.to, r.merge_approved, r.summary],
      ['approve', 'alice', 'implemented', 'verified', false, 'Approved in review'],
    );
    const [signal] = assertOk<{ signals: SignalView[] }>(await sf(['signals', epic.id])).signals;
    assert.deepEqual([signal?.type, signal?.created_by], ['pass', 'alice']);
  });

  test('a verified epic that is not critical has nothing left to approve: exit 1, nothing written', async () => {
    const before = tables();
    const err = assertFails(await sf(['review', epic.id, '--approve']), 1, 'not_reviewable');
    assert.equal(err.message, `${epic.id} already passed review (verified) and merges next: nothing to approve`);
    assert.equal(tables(), before);
  });

  test('Request changes still works on a verified epic, before it merges: verified → in progress', async () => {
    const r = assertOk<ReviewResult>(
      await sf(['review', epic.id, '--request-changes', '--comment', 'src/cache.ts:2:Name it read, not get']),
    );
    assert.deepEqual(
      [r.transition?.from, r.transition?.to, r.transition?.next_role, r.transition?.iteration],
      ['verified', 'in_progress', 'ralph', 3],
    );
    const text = (await runCli(epic.wt, ['context', '--role', 'ralph', '--epic', epic.id])).stdout;
    assert.match(
      text,
      /- implementation_failure \(by marge\): Changes requested in review: Name it read, not get\n {2}- src\/cache\.ts:2 — Name it read, not get\n/,
    );
  });
});

describe('review: approving a critical epic is also its merge approval', () => {
  test('implemented → verified, and merge_approved_by is the person', async () => {
    const { id } = await implementedEpic('Payment migration', 'critical');
    const r = assertOk<ReviewResult>(
      await sf(['review', id, '--approve', '--comment', 'src/cache.ts:1:Fine for now', '--summary', 'Reads well']),
    );
    assert.deepEqual([r.transition?.to, r.merge_approved, r.summary], ['verified', true, 'Reads well']);
    const shown = assertOk<{ status: string; merge_approved_by: string | null }>(await sf(['epic', 'show', id]));
    assert.deepEqual([shown.status, shown.merge_approved_by], ['verified', 'marge']);
    const [signal] = assertOk<{ signals: SignalView[] }>(await sf(['signals', id])).signals;
    assert.deepEqual([signal?.type, signal?.locations.map((l) => l.note)], ['pass', ['Fine for now']]);
    const before = tables();
    assert.match(
      assertFails(await sf(['review', id, '--approve']), 1, 'not_reviewable').message,
      /merge is already approved \(by marge\)/,
    );
    assert.equal(tables(), before);
  });
});

describe('review: never while an agent works on the epic', () => {
  test('a live Bart run → exit 1 review_busy, nothing written; once it ends the review goes through', async () => {
    const { id, wt } = await implementedEpic('Busy review');
    const run = runCliAsync(wt, [
      'run',
      '--role',
      'bart',
      '--epic',
      id,
      '--',
      process.execPath,
      '-e',
      'setTimeout(() => {}, 4000)',
    ]);
    const deadline = Date.now() + 20_000;
    while (assertOk<{ runs: unknown[] }>(await sf(['runs', '--epic', id, '--active'])).runs.length === 0) {
      assert.ok(Date.now() < deadline, 'the run shows as active');
      await new Promise((r) => setTimeout(r, 100));
    }
    const before = tables();
    assert.match(
      assertFails(await sf(['review', id, '--approve']), 1, 'review_busy').message,
      new RegExp(`^bart is working on ${id} now \\(run \\d+\\); review it once that run ends$`),
    );
    assert.equal(tables(), before);
    assert.equal((await run).code, 0);
    assert.equal(assertOk<ReviewResult>(await sf(['review', id, '--approve'])).transition?.to, 'verified');
  });
});
