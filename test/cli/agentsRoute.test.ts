// `springfield agents route`: routing written into a real repository's config.json (other keys kept),
// who leads per kind of step from the scripted history's ledger, and bad input refused in one line
// with nothing written.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ManualClock } from '../../src/core/clock.ts';
import { openStore } from '../../src/core/store/index.ts';
import { ensureCli, makeRepo, runCli } from '../helpers/gitRepo.ts';
import { script, T0 } from '../helpers/statsHistory.ts';

test('agents route writes the route, keeps the config, shows who leads per kind; bad input is one line and writes nothing', async (t) => {
  ensureCli();
  const repo = makeRepo({ files: { '.gitignore': '.springfield/\n' } });
  t.after(() => repo.cleanup());
  const db = join(repo.root, '.springfield', 'state.db');
  const clock = new ManualClock(T0);
  const store = openStore({ location: db, ifMissing: 'create', clock });
  await script(store, clock);
  await store.close();
  const config = join(repo.root, '.springfield', 'config.json');
  writeFileSync(config, JSON.stringify({ maxParallelAgents: 2 }));

  for (const bad of [
    ['bart', 'claude', 'codex'],
    ['ralph', 'claude'],
    ['ralph', 'claude', 'claude'],
    ['ralph', 'claude', 'nonesuch'],
    ['ralph', 'claude', 'codex', '--by', 'speed'],
  ]) {
    const r = runCli(repo.root, ['agents', 'route', ...bad]);
    assert.notEqual(r.code, 0, bad.join(' '));
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    assert.deepEqual(JSON.parse(readFileSync(config, 'utf8')), { maxParallelAgents: 2 }, 'nothing written');
  }

  const routed = runCli(repo.root, ['agents', 'route', 'ralph', 'claude', 'codex', '--by', 'cost', '--json']);
  assert.equal(routed.code, 0, routed.stderr);
  // A config file the person never allowed stays unallowed: the trust gate's warning, one line.
  assert.match(routed.stderr, /^springfield: warning: the rest of .* was not allowed by you/);
  const r = routed.json<{ route: unknown; standings: string[] }>();
  assert.deepEqual(r.route, { presets: ['claude', 'codex'], by: 'cost' });
  const written = JSON.parse(readFileSync(config, 'utf8')) as Record<string, unknown>;
  assert.equal(written.maxParallelAgents, 2);
  assert.deepEqual(written.routes, { ralph: { presets: ['claude', 'codex'], by: 'cost' } });
  assert.ok(
    Array.isArray((written.roles as Record<string, unknown>).ralph),
    "ralph's own command is the first preset's",
  );
  // The history: claude built both docs steps (2/2 first-pass), codex the code step (0/1): both still exploring.
  assert.deepEqual(r.standings, [
    '  Ralph on codex for docs steps: 0/0 first-pass, no merged step yet; claude 2/2, $0.55 (exploring: every preset builds a docs step first)',
    '  Ralph on claude for tests steps: 0/0 first-pass, no merged step yet; codex 0/0, no merged step yet (exploring: every preset builds a tests step first)',
    '  Ralph on claude for code steps: 0/0 first-pass, no merged step yet; codex 0/1, $0.85 (exploring: every preset builds a code step first)',
  ]);
  const shown = runCli(repo.root, ['agents', 'route']);
  assert.equal(shown.code, 0, shown.stderr);
  assert.match(shown.stdout, /^Ralph is routed between claude, codex by cost:\n {2}Ralph on codex for docs steps/);
  assert.ok(!existsSync(join(repo.root, '.springfield', 'config.json.tmp')));
});
