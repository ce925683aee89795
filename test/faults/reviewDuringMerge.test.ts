// Fault suite: a person's Request changes lands while the scheduler prepares a verified epic's merge
// (rebased onto a main that moved, verified again). The merge must not land: the epic goes back to
// Ralph, and main gets exactly one squash merge of the epic, with the fix in it. Without the guard
// (EpicWork.stillVerified, read just before the merge lands) the squash merge lands without the fix,
// recording it fails ("cannot merged an epic that is in progress"), and after Ralph's fix the next
// merge's rebase conflicts with that squash merge (blocked, merge_failed).
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { approve, faultRepo, violations } from './harness.ts';

/**
 * The verification command, and the person: while the epic is built it moves main on once (so the
 * merge rebases and verifies again); when it runs with the epic verified, that is the merge's own
 * verification, and the person's review sends the epic back then, once.
 */
const VERIFY = String.raw`
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const env = process.env;
const sf = (...a) => JSON.parse(execFileSync(process.execPath, [env.SF_CLI, ...a, '--json'], { encoding: 'utf8' }));
const epic = env.SPRINGFIELD_EPIC;
const mark = (name) => path.join(env.SF_SYNC, name);
const status = sf('epic', 'show', epic).status;
if (status === 'in_progress' && !fs.existsSync(mark('moved'))) {
  fs.writeFileSync(mark('moved'), '');
  execFileSync('git', ['-C', env.SF_MAIN, 'commit', '-q', '--allow-empty', '-m', 'main moves on']);
}
if (status === 'verified' && !fs.existsSync(mark('reviewed'))) {
  fs.writeFileSync(mark('reviewed'), '');
  sf('review', epic, '--request-changes', '--summary', 'Not yet: the person found a problem', '--agent', 'marge');
}
`;

test(
  "a person's Request changes during the merge's own verification: not merged, back to Ralph, merged once with the fix",
  { timeout: 300_000 },
  async (t) => {
    const f = faultRepo(t);
    const script = join(f.base, 'verify.cjs');
    writeFileSync(script, VERIFY);
    f.config({ verification: [[process.execPath, script]] });
    const epic = f.epic('Reviewed while merging');
    assert.equal(f.orchestrate().code, 0);
    approve(f, epic);
    const run = f.orchestrate();
    assert.deepEqual(violations(f, run, { epic, maxSessions: { ralph: 3 }, status: 'done' }), [], run.stderr);
    assert.match(
      run.stderr,
      new RegExp(`${epic}: not merged: it is in progress now \\(sent back while it was prepared for the merge\\)`),
    );
    const signals = f.sf('signals', epic).json.signals as { type: string; created_by: string }[];
    assert.deepEqual(
      signals.map((s) => [s.type, s.created_by]),
      [['implementation_failure', 'marge']],
      "the person's review is recorded",
    );
    const merges = f
      .git('log', '--format=%H', '--grep', `Springfield-Epic: ${epic}`, 'main')
      .split('\n')
      .filter(Boolean);
    assert.equal(merges.length, 1, `exactly one squash merge of ${epic} on main: ${merges.join(', ')}\n${run.stderr}`);
    assert.match(
      f.git('show', '--name-only', '--format=', merges[0] as string),
      new RegExp(`^work/${epic}/fix\\.txt$`, 'm'),
      "Ralph's fix is in the merge",
    );
  },
);
