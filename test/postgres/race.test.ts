// The 16-process race on PostgreSQL: two clones of one plan acting as two hosts (SPRINGFIELD_HOST a
// and b, the same worktree paths on both), sharing one durable throwaway server, checked by the stress
// checker (test/stress/checker.ts): 0 double claims, 0 lost completions, dependencies respected.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { checkRows, readLogs, summarize } from '../stress/checker.ts';
import { prepareRun } from '../stress/planGen.ts';
import { spawnWorker, type WorkerHandle } from '../stress/worker.ts';
import { postgresForFile } from '../helpers/postgres.ts';
import { postgresRows, prepareShared, REPO } from './raceRows.ts';

const SEED = Number(process.env.STRESS_SEED ?? Math.floor(Math.random() * 2 ** 31));
const WORKERS = 16;
const STEPS = 300;
const pgServer = postgresForFile();
console.log(`postgres race seed ${SEED} (replay with STRESS_SEED=${SEED})`);

describe('race on PostgreSQL: 16 processes on two hosts claim and complete one plan', () => {
  test("every step completed exactly once by its token's holder, after its dependencies; counts kept right", async (t) => {
    const url = pgServer.server.createDatabase('race');
    const run = await prepareRun({ steps: STEPS, seed: SEED });
    t.after(() => rmSync(run.dir, { recursive: true, force: true }));
    const clones = await prepareShared(url, run);
    const handles: WorkerHandle[] = [];
    const logs: string[] = [];
    for (let i = 0; i < WORKERS; i++) {
      const host = i % 2 === 0 ? 'a' : 'b';
      const log = join(run.dir, `worker-${i}.log`);
      logs.push(log);
      handles.push(
        spawnWorker({
          db: url,
          host,
          repo: REPO,
          plan: host === 'a' ? clones.a : clones.b,
          planPath: run.planPath,
          worktree: `/wt/worker-${i >> 1}`,
          mode: 'correct',
          log,
          leaseSeconds: 600,
          maxOps: Number.MAX_SAFE_INTEGER,
          idleMs: 10_000,
          seed: SEED * 31 + i,
          thinkMs: 10,
          waitForGo: true,
        }),
      );
    }
    await Promise.all(handles.map((h) => Promise.race([h.ready, h.done])));
    const started = Date.now();
    for (const h of handles) h.go();
    const results = await Promise.all(handles.map((h) => h.done));
    const { lines, violations: logViolations } = readLogs(logs);
    const violations = [...logViolations, ...checkRows(await postgresRows(url, REPO), lines)];

    for (const r of results) assert.equal(r.code, 0, `a worker failed: ${r.stderr}`);
    const summaries = results.map((r) => r.summary).filter((s) => s !== null);
    assert.equal(summaries.length, WORKERS);
    const total = (key: 'claims' | 'completes'): number => summaries.reduce((n, s) => n + s[key], 0);
    assert.deepEqual(
      summaries.flatMap((s) => Object.entries(s.refused)),
      [],
      'with long leases no worker may be refused its own step',
    );
    assert.equal(total('claims'), STEPS);
    assert.equal(total('completes'), STEPS);
    assert.deepEqual(violations, [], `violations: ${JSON.stringify(summarize(violations))}`);
    const byHost = (h: string) => lines.filter((l) => l.op === 'complete' && l.worker.startsWith(`${h}:`)).length;
    assert.ok(byHost('a') > 0 && byHost('b') > 0, `both hosts completed steps (a ${byHost('a')}, b ${byHost('b')})`);
    t.diagnostic(
      `seed ${SEED}: ${STEPS} steps by ${WORKERS} workers on 2 hosts in ${Date.now() - started} ms (host a ${byHost('a')}, host b ${byHost('b')})`,
    );

    // The checker reads what PostgreSQL holds: a completion moved to another holder and a stored count off by one are reported.
    const db = 'race';
    pgServer.server.psql(
      `UPDATE springfield.steps SET completed_host = CASE completed_host WHEN 'a' THEN 'b' ELSE 'a' END WHERE anchor = (SELECT min(anchor) FROM springfield.steps)`,
      db,
    );
    pgServer.server.psql(
      `UPDATE springfield.plan_open SET n = n + 1 WHERE shard = (SELECT min(shard) FROM springfield.plan_open)`,
      db,
    );
    const tampered = summarize(checkRows(await postgresRows(url, REPO), lines));
    assert.ok(
      (tampered.wrong_holder ?? 0) > 0 && (tampered.lost_completion ?? 0) > 0 && (tampered.integrity ?? 0) > 0,
      `the checker must see the tampering: ${JSON.stringify(tampered)}`,
    );
    // A step's stored blockers off by one, then a dependency from another family no longer completed
    // while its dependant's stored blockers stay 0 (the readiness triggers off for that write): each
    // is reported against the graph.
    const graph = async () =>
      (await postgresRows(url, REPO)).integrity.filter((v) => v.detail.includes('the graph says'));
    const top = `(SELECT max(anchor) FROM springfield.steps WHERE parent_anchor IS NULL)`;
    pgServer.server.psql(`UPDATE springfield.steps SET blockers = blockers + 1 WHERE anchor = ${top}`, db);
    assert.deepEqual(
      (await graph()).map((v) => v.detail),
      ['blockers 1, the graph says 0'],
    );
    pgServer.server.psql(`UPDATE springfield.steps SET blockers = 0`, db);
    assert.deepEqual(await graph(), []);
    pgServer.server.psql(
      `SET session_replication_role = replica; UPDATE springfield.steps SET status = 'pending' WHERE anchor = (SELECT sd.depends_on FROM springfield.step_deps sd
      JOIN springfield.steps c ON c.plan_path = sd.plan_path AND c.anchor = sd.step_anchor
      JOIN springfield.steps d ON d.plan_path = sd.plan_path AND d.anchor = sd.depends_on
      WHERE coalesce(c.parent_anchor, c.anchor) <> coalesce(d.parent_anchor, d.anchor) ORDER BY 1 LIMIT 1)`,
      db,
    );
    const off = await graph();
    assert.ok(
      off.length > 0 && off.every((v) => /^blockers 0, the graph says [1-9]/.test(v.detail)),
      JSON.stringify(off),
    );
  });
});
