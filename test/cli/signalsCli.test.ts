import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadSqlite } from '../../src/core/store/sqlite/sqlite.ts';
import { assertFails, assertOk, makeRepo, type CliResult, type Repo } from '../helpers/gitRepo.ts';
import { runCli } from '../helpers/cliInProcess.ts';
import type { SignalResult, SignalView } from '../../src/core/store/epicTypes.ts';

const PLAN = '# Plan: Signals\n\n## Step 1: Only {#step-1}\n**Tasks:**\n- [ ] Do it\n';
const APP = Array.from({ length: 20 }, (_, i) => `export const v${i} = ${i};\n`).join('');

let repo: Repo;
let outside: string;
let epicId: string;
before(async () => {
  repo = makeRepo({
    files: { '.gitignore': '.springfield/\n', 'plans/s.md': PLAN, 'src/app.ts': APP, 'src/lib/util.ts': APP },
  });
  outside = realpathSync(mkdtempSync(join(tmpdir(), 'sf-outside-')));
  writeFileSync(join(outside, 'secret.ts'), 'x\n');
  symlinkSync(join(outside, 'secret.ts'), join(repo.root, 'escape.ts'));
  epicId = assertOk<{ id: string }>(await sf(['epic', 'create', 'Signals'])).id;
  assertOk(await sf(['plan', 'propose', epicId, 'plans/s.md']));
  assertOk(await sf(['plan', 'approve', epicId]));
  // The step is built in the epic's own worktree (docs/lifecycle.md, "Where work happens").
  const wt = assertOk<{ worktree_path: string }>(await sf(['epic', 'start', epicId])).worktree_path;
  assertOk(await sf(['claim', 'plans/s.md'], wt));
  assertOk(await sf(['update', 'plans/s.md', 'step-1', '--all', 'completed'], wt));
  assertOk(await sf(['complete', 'plans/s.md', 'step-1'], wt));
  assertOk(await sf(['epic', 'finish', epicId]));
});
after(() => {
  repo.cleanup();
  rmSync(outside, { recursive: true, force: true });
});

async function sf(args: readonly string[], cwd = repo.root): Promise<CliResult> {
  return await runCli(cwd, [...args, '--json']);
}

/** Every row that a signal could touch, for "the database is logically unchanged". */
function snapshot(): string {
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

describe('signal: bad input', () => {
  const ok = ['--type', 'implementation_failure', '--summary', 'broken'];
  const cases: readonly [string, readonly string[], string][] = [
    ['an unknown type', ['--type', 'fail', '--summary', 'x'], 'bad_option'],
    ['no type', ['--summary', 'x'], 'bad_option'],
    ['no summary', ['--type', 'pass'], 'missing_value'],
    ['a blank summary', ['--type', 'pass', '--summary', '   '], 'missing_value'],
    ['--summary without its value', ['--type', 'pass', '--summary'], 'missing_value'],
    ['a location above the repository', [...ok, '--location', '../x:1'], 'location_outside_repository'],
    [
      'an absolute location outside',
      [...ok, '--location', `${join('/', 'etc', 'hostname')}:1`],
      'location_outside_repository',
    ],
    ['a symlink leading outside', [...ok, '--location', 'escape.ts:1'], 'location_outside_repository'],
    ['the repository root itself', [...ok, '--location', '.:1'], 'location_outside_repository'],
    [
      'a good location then one outside',
      [...ok, '--location', 'src/app.ts:1', '--location', 'src/../../x.ts:2'],
      'location_outside_repository',
    ],
    ['line 0', [...ok, '--location', 'src/app.ts:0'], 'bad_location'],
    ['an end line before the start', [...ok, '--location', 'src/app.ts:5:3'], 'bad_location'],
    ['a line that is not a number', [...ok, '--location', 'src/app.ts:abc'], 'bad_location'],
    ['a negative line', [...ok, '--location', 'src/app.ts:-1'], 'bad_location'],
    ['no line at all', [...ok, '--location', 'src/app.ts'], 'bad_location'],
    ['--note without --location', [...ok, '--note', 'n'], 'bad_location'],
    ['--note before its --location', [...ok, '--note', 'n', '--location', 'src/app.ts:1'], 'bad_location'],
    ['two notes on one location', [...ok, '--location', 'src/app.ts:1', '--note', 'a', '--note', 'b'], 'bad_location'],
    ['--file without --line', [...ok, '--file', 'src/app.ts'], 'bad_location'],
    ['--line without --file', [...ok, '--line', '3'], 'bad_location'],
    ['--file with a bad --line', [...ok, '--file', 'src/app.ts', '--line', '0'], 'bad_location'],
    ['--file outside with --line', [...ok, '--file', '../x.ts', '--line', '2'], 'location_outside_repository'],
  ];
  for (const [name, args, code] of cases) {
    test(`${name} → exit 2 (${code}), nothing stored`, async () => {
      const before = snapshot();
      assertFails(await sf(['signal', epicId, ...args]), 2, code);
      assert.equal(snapshot(), before);
    });
  }

  test('an unknown epic → exit 2 unknown_epic', async () => {
    const before = snapshot();
    assertFails(await sf(['signal', 'sf-0000', ...ok]), 2, 'unknown_epic');
    assert.equal(snapshot(), before);
  });
});

describe('signal: locations', () => {
  test('are stored in command-line order with file, line, end_line and note', async () => {
    const r = assertOk<SignalResult>(
      await sf([
        'signal',
        epicId,
        '--type',
        'implementation_failure',
        '--summary',
        '  off by one  ',
        '--location',
        'src/app.ts:3',
        '--note',
        'first',
        '--file',
        'src/lib/util.ts',
        '--line',
        '7:9',
        '--location',
        './src/./app.ts:10:12',
        '--note',
        'second',
        '--file',
        'src/lib/util.ts',
        '--line',
        '1',
        '--note',
        'after --line',
      ]),
    );
    assert.deepEqual([r.locations, r.transition?.from, r.transition?.to], [4, 'implemented', 'in_progress']);
    const expected = [
      { file: 'src/app.ts', line: 3, end_line: null, note: 'first' },
      { file: 'src/lib/util.ts', line: 7, end_line: 9, note: null },
      { file: 'src/app.ts', line: 10, end_line: 12, note: 'second' },
      { file: 'src/lib/util.ts', line: 1, end_line: null, note: 'after --line' },
    ];
    const { signals } = assertOk<{ signals: SignalView[] }>(await sf(['signals', epicId]));
    const stored = signals.find((s) => s.id === r.signal_id);
    assert.deepEqual(
      [stored?.type, stored?.summary, stored?.locations],
      ['implementation_failure', 'off by one', expected],
    );
    const db = new (loadSqlite())(join(repo.root, '.springfield', 'state.db'), { readonly: true });
    try {
      assert.deepEqual(
        db
          .prepare('SELECT file, line, end_line, note FROM signal_locations WHERE signal_id = ? ORDER BY id')
          .all(r.signal_id),
        expected,
      );
    } finally {
      db.close();
    }
  });

  test('paths given from a subdirectory are stored relative to the repository root', async () => {
    assertOk(await sf(['epic', 'finish', epicId]));
    const r = assertOk<SignalResult>(
      await sf(
        [
          'signal',
          epicId,
          '--type',
          'pass',
          '--summary',
          'fine now',
          '--location',
          'app.ts:2',
          '--location',
          '../plans/s.md:1:4',
        ],
        join(repo.root, 'src'),
      ),
    );
    assert.equal(r.transition?.to, 'verified');
    const { signals } = assertOk<{ signals: SignalView[] }>(await sf(['signals', epicId]));
    assert.deepEqual(
      signals.map((s) => s.id),
      [r.signal_id, r.signal_id - 1],
      'newest first',
    );
    assert.deepEqual(
      signals[0]?.locations.map((l) => [l.file, l.line, l.end_line]),
      [
        ['src/app.ts', 2, null],
        ['plans/s.md', 1, 4],
      ],
    );
  });
});
