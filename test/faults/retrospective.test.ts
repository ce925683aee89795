// Lovejoy, mechanically (docs/lifecycle.md): at the merge the summary gets a retrospective (sessions by
// role, failed runs and why, verification failures, approval to merge), PLAN.md gets it beside the
// epic's id, and the summary opens with the verdict; verification evidence names the step it followed.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { approve, faultRepo, violations } from './harness.ts';

test(
  'after the merge: verdict line first, evidence tied to steps, a retrospective in the summary and in PLAN.md beside the id',
  { timeout: 300_000 },
  (t) => {
    const f = faultRepo(t);
    const mark = join(f.base, 'verified-once');
    // Verification fails the first time it runs, then passes.
    f.config({
      verification: [
        [
          process.execPath,
          '-e',
          `const fs = require('node:fs'); if (!fs.existsSync(${JSON.stringify(mark)})) { fs.writeFileSync(${JSON.stringify(mark)}, ''); console.error('flaky wiring'); process.exit(1); }`,
        ],
      ],
    });
    const epic = f.epic('Order history');
    writeFileSync(
      join(f.repo, 'PLAN.md'),
      `# Plan\n\n### Order history\n**springfield:** \`${epic}\`\nWhy: people ask where their orders went.\n\n### Later\nNothing yet.\n`,
    );
    f.git('add', 'PLAN.md');
    f.git('commit', '-qm', 'PLAN.md');
    f.behave({ ralph: { do: 'exit1', times: 1 } });
    const planning = f.orchestrate();
    assert.equal(planning.code, 0, planning.stderr);
    approve(f, epic);
    const run = f.orchestrate();
    assert.deepEqual(
      violations(f, run, { epic, maxSessions: { lisa: 1, ralph: 3, bart: 0 }, status: 'done' }),
      [],
      run.stderr,
    );

    const summary = f.git('show', `HEAD:SUMMARY-${epic}.md`);
    const [first] = summary.split('\n');
    assert.match(
      first ?? '',
      /^\*\*Verdict: passed\*\* — `.+` after step-2 at \d{4}-\d\d-\d\dT/,
      'the summary opens with the verdict: which command, after which step, when',
    );
    assert.match(
      summary,
      /^- FAIL `.+` after step-1 \(run #\d+\) \(exit 1,/m,
      'the failure is tied to the build it followed',
    );
    assert.match(summary, /^- PASS `.+` after step-2 \(run #\d+\)/m);

    const runs = f.sf('runs', '--epic', epic).json.runs as {
      id: number;
      role: string;
      status: string;
      step_anchor: string | null;
    }[];
    const failedRun = runs.find((r) => r.status === 'failed');
    assert.ok(failedRun, 'one builder run failed');
    assert.match(summary, /^## Retrospective$/m);
    assert.match(summary, /^- Sessions by role: lisa 1, ralph 3 \(total 4\)$/m);
    assert.match(
      summary,
      new RegExp(`^- Failed runs: 1\\n  - run #${failedRun.id} ralph on step-1: failed — exit 1$`, 'm'),
    );
    assert.match(summary, /^- Verification failures: 1\n  - `.+` exited 1 after step-1 at /m);
    assert.match(summary, /^- Approval to merge: \d+ min \(approved \d{4}-.+, merged \d{4}-.+\)$/m);

    const planMd = f.git('show', 'HEAD:PLAN.md');
    assert.match(
      planMd,
      new RegExp(
        `\\*\\*springfield:\\*\\* \`${epic}\`\\n\\*\\*Retrospective \\(${epic}\\):\\*\\* merged \\d{4}-\\d\\d-\\d\\d; sessions lisa 1, ralph 3 \\(total 4\\); failed runs 1; verification failures 1; approval to merge \\d+ min\\.\\nWhy: people ask`,
      ),
      'beside the epic id, the rest of PLAN.md kept',
    );
    assert.match(planMd, /### Later\nNothing yet\./);
    assert.equal(f.git('status', '--porcelain'), '', 'all of it in the squash commit');
    const events = f.sf('events', '--epic', epic).json.events as {
      action: string;
      data: { sessions?: Record<string, number> } | null;
    }[];
    assert.deepEqual(events.find((e) => e.action === 'retrospective')?.data?.sessions, { lisa: 1, ralph: 3 });
  },
);
