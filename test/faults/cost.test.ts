// Cost per run (docs/lifecycle.md): a role's config names how its agent reports usage (a preset such as
// claude or codex); the tokens and cost its output reports are stored per run and shown in `runs`, per
// epic, and in the summary. A role without one stores nothing; a config naming no such reader is refused.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { CLI_PATH } from '../helpers/gitRepo.ts';
import { approve, faultRepo, violations } from './harness.ts';

interface Run {
  id: number;
  role: string;
  cost_usd: number | null;
  input_tokens: number | null;
  output_tokens: number | null;
  cache_read_tokens: number | null;
  cache_write_tokens: number | null;
}

test(
  "tokens and cost read from the agents' own output, stored per run, shown in runs, per epic and in the summary",
  { timeout: 300_000 },
  (t) => {
    const f = faultRepo(t, { usage: { lisa: 'codex', ralph: 'claude' } });
    const epic = f.epic('Costed work', { complexity: 'standard' });
    f.behave({
      lisa: { do: 'ok', usage: 'codex' },
      ralph: { do: 'ok', usage: 'claude' },
      bart: { do: 'ok', usage: 'claude' },
    });
    const planning = f.orchestrate();
    assert.equal(planning.code, 0, planning.stderr);
    approve(f, epic);
    const run = f.orchestrate();
    assert.deepEqual(
      violations(f, run, { epic, maxSessions: { lisa: 1, ralph: 2, bart: 1 }, status: 'done' }),
      [],
      run.stderr,
    );

    const listed = f.sf('runs', '--epic', epic).json as {
      runs: Run[];
      usage: {
        role: string;
        runs: number;
        cost_usd: number | null;
        input_tokens: number | null;
        output_tokens: number | null;
      }[];
    };
    const by = (role: string) =>
      listed.runs
        .filter((r) => r.role === role)
        .map((r) => [r.cost_usd, r.input_tokens, r.output_tokens, r.cache_read_tokens, r.cache_write_tokens]);
    assert.deepEqual(
      by('ralph'),
      [
        [0.0123, 1000, 200, 50, 10],
        [0.0123, 1000, 200, 50, 10],
      ],
      'Claude Code: the result event',
    );
    assert.deepEqual(by('lisa'), [[null, 900, 80, 200, null]], 'Codex: every turn.completed added up, no cost');
    assert.deepEqual(
      by('bart'),
      [[null, null, null, null, null]],
      'no reader configured for Bart: nothing stored, though his output had a report',
    );
    assert.deepEqual(
      listed.usage.map((u) => [u.role, u.runs, u.cost_usd, u.input_tokens, u.output_tokens]),
      [
        ['lisa', 1, null, 900, 80],
        ['ralph', 2, 0.0246, 2000, 400],
      ],
    );

    const text = spawnSync(process.execPath, [CLI_PATH, 'runs', '--epic', epic], {
      cwd: f.repo,
      encoding: 'utf8',
      env: { ...process.env, XDG_STATE_HOME: join(f.base, 'unused') },
    }).stdout;
    assert.match(text, /^#\d+ ralph .* — \$0\.0123 · 1,000 in \/ 200 out tokens$/m);
    assert.match(text, new RegExp(`^  ${epic} ralph: \\$0\\.0246 · 2,000 in / 400 out tokens over 2 runs$`, 'm'));
    const summary = f.git('show', `HEAD:SUMMARY-${epic}.md`);
    assert.match(
      summary,
      /^## Cost\n\n- lisa: no cost reported, 900 in \/ 80 out tokens \(1 run\)\n- ralph: \$0\.0246, 2000 in \/ 400 out tokens \(2 runs\)\n- total: \$0\.0246$/m,
    );
  },
);

test(
  'a usage reader that names no preset is refused with the file, field and the choices (exit 2)',
  { timeout: 60_000 },
  (t) => {
    const f = faultRepo(t);
    writeFileSync(
      join(f.repo, '.springfield', 'config.json'),
      JSON.stringify({ roles: { ralph: ['x'] }, usage: { ralph: 'nonesuch' } }),
    );
    const r = f.sf('orchestrate', '--dry-run');
    assert.equal(r.code, 2, r.stderr);
    assert.match(
      r.stderr,
      /config\.json: usage\.ralph: must name a preset that reports usage \(claude, codex, .*\) or give the fields/,
    );
  },
);
