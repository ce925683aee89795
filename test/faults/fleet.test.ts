// The fleet at the mission's scale (docs/scheduler.md, "The fleet"): twenty scripted agents at once on
// twenty epics (one agent per epic: its worktree is shared) on this machine, driven by a real
// `springfield orchestrate`. The machine admission reads is a folder laid out like /proc
// (SPRINGFIELD_PROC_ROOT): it starts under CPU pressure, and the first agent lifts it.
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { approve, faultRepo, heldByDeadRuns } from './harness.ts';

const EPICS = 20;
const SLOTS = { verification: 2, setup: 1 };
const PRESSURED = 'some avg10=95.00 avg60=90.00 avg300=80.00 total=1\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n';
const CALM = 'some avg10=0.00 avg60=0.00 avg300=0.00 total=0\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n';

/**
 * The builder: records its start (and whether the machine was pressured then; the first lifts the
 * pressure), waits (bounded) until every epic's builder has arrived, so all of them are alive at
 * once, then completes its step and records its end.
 */
const AGENT = String.raw`
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const env = process.env;
const epic = env.SPRINGFIELD_EPIC, step = env.SPRINGFIELD_STEP;
const sf = (...a) => execFileSync(process.execPath, [env.SF_CLI, ...a], { encoding: 'utf8' });
const log = (o) => fs.appendFileSync(env.SF_LOG, JSON.stringify({ kind: 'agent', epic, step, at: Date.now(), ...o }) + '\n');
const cpu = path.join(env.SF_PROC, 'pressure', 'cpu');
const pressured = fs.readFileSync(cpu, 'utf8').startsWith('some avg10=95');
log({ event: 'start', pressured });
if (pressured) fs.writeFileSync(cpu, env.SF_CALM);
fs.writeFileSync(path.join(env.SF_SYNC, 'here@' + epic), '');
const arrived = () => fs.readdirSync(env.SF_SYNC).filter((n) => n.startsWith('here@')).length;
const deadline = Date.now() + 150000;
while (arrived() < Number(env.SF_EPICS) && Date.now() < deadline) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 100);
log({ event: 'met', arrived: arrived() });
fs.mkdirSync('work', { recursive: true });
fs.writeFileSync('work/' + epic + '.txt', epic + '\n');
sf('update', env.SPRINGFIELD_PLAN, step, '--all', 'completed');
sf('commit', '-m', 'Build ' + epic);
log({ event: 'end' });
`;

/** A setup or verification command: records when it ran, for the slots' check. */
const HEAVY = String.raw`
const fs = require('node:fs');
const [log, kind, cpu] = process.argv.slice(2);
const mark = (event, more) => fs.appendFileSync(log, JSON.stringify({ kind, event, epic: process.env.SPRINGFIELD_EPIC, at: Date.now(), ...more }) + '\n');
mark('start', { pressured: fs.readFileSync(cpu, 'utf8').startsWith('some avg10=95') });
Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 200);
mark('end');
`;

interface Mark {
  kind: string;
  event: string;
  epic: string;
  at: number;
  pressured?: boolean;
  arrived?: number;
  step?: string;
}

/** [start, end] per epic and kind, from the marks. */
function intervals(marks: Mark[], kind: string): { epic: string; from: number; to: number }[] {
  const open = new Map<string, number>();
  const out: { epic: string; from: number; to: number }[] = [];
  for (const m of marks.filter((x) => x.kind === kind)) {
    if (m.event === 'start') open.set(m.epic, m.at);
    if (m.event === 'end') {
      out.push({ epic: m.epic, from: open.get(m.epic) ?? m.at, to: m.at });
      open.delete(m.epic);
    }
  }
  return out;
}

/** The most intervals alive at one instant. */
function peak(list: { from: number; to: number }[]): number {
  let most = 0;
  for (const a of list) most = Math.max(most, list.filter((b) => b.from <= a.from && a.from <= b.to).length);
  return most;
}

test(
  'twenty agents at once on twenty epics: every epic done, none blocked, no step claimed twice, admission and slots respected',
  { timeout: 600_000 },
  async (t) => {
    const agentFile = (base: string) => join(base, 'fleet-agent.cjs');
    const heavyFile = (base: string) => join(base, 'heavy.cjs');
    const f = faultRepo(t, {}, (base) => ({
      SPRINGFIELD_PROC_ROOT: join(base, 'proc'),
      SF_PROC: join(base, 'proc'),
      SF_CALM: CALM,
      SF_EPICS: String(EPICS),
    }));
    const proc = join(f.base, 'proc');
    mkdirSync(join(proc, 'pressure'), { recursive: true });
    writeFileSync(join(proc, 'meminfo'), 'MemTotal: 24684084 kB\nMemAvailable: 20000000 kB\n');
    writeFileSync(join(proc, 'pressure', 'cpu'), PRESSURED);
    writeFileSync(join(proc, 'pressure', 'memory'), CALM);
    writeFileSync(join(proc, 'pressure', 'io'), CALM);
    writeFileSync(agentFile(f.base), AGENT);
    writeFileSync(heavyFile(f.base), HEAVY);
    const heavy = (kind: string) => [process.execPath, heavyFile(f.base), f.log, kind, join(proc, 'pressure', 'cpu')];
    f.config({
      roles: { ralph: [process.execPath, agentFile(f.base)] },
      maxParallelAgents: EPICS,
      admission: {},
      slots: SLOTS,
      setup: [heavy('setup')],
      verification: [heavy('verify')],
    });
    const epics: string[] = [];
    for (let i = 1; i <= EPICS; i++) {
      const slug = `fleet-${String(i).padStart(2, '0')}`;
      writeFileSync(
        join(f.repo, 'plans', `${slug}.md`),
        `# Plan: Fleet ${i}\n\n## Step 1: Build it {#step-1}\n**Tasks:**\n- [ ] Build\n`,
      );
      f.git('add', '-A');
      f.git('commit', '-qm', `Plan ${slug}`);
      const epic = f.epic(`Fleet ${String(i).padStart(2, '0')}`);
      const proposed = f.sf('plan', 'propose', epic, `plans/${slug}.md`);
      assert.equal(proposed.code, 0, proposed.stderr);
      approve(f, epic);
      epics.push(epic);
    }

    const run = f.orchestrate({ timeoutMs: 540_000 });
    assert.equal(run.timedOut, false, `orchestrate did not return by itself\n${run.stderr}`);
    assert.equal(run.code, 0, run.stderr);

    for (const epic of epics) {
      const shown = f.sf('epic', 'show', epic).json as { status?: string; status_reason?: string | null };
      assert.equal(shown.status, 'done', `${epic}: ${shown.status} (${shown.status_reason ?? ''})\n${run.stderr}`);
    }
    assert.deepEqual(heldByDeadRuns(f), []);
    const marks = readFileSync(f.log, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Mark);
    const starts = marks.filter((m) => m.kind === 'agent' && m.event === 'start');
    // No step claimed twice: one builder per epic's one step, and no failed run to retry.
    assert.deepEqual(starts.map((m) => `${m.epic}#${m.step}`).sort(), epics.map((e) => `${e}#step-1`).sort());
    const runs = (f.sf('runs').json.runs ?? []) as { role: string; status: string }[];
    assert.deepEqual(
      runs.filter((r) => r.status !== 'succeeded').map((r) => `${r.role} ${r.status}`),
      [],
    );
    // Twenty at once: each builder waited until all twenty had arrived, and none left before that.
    const met = marks.filter((m) => m.kind === 'agent' && m.event === 'met');
    assert.deepEqual(
      met.filter((m) => (m.arrived ?? 0) < EPICS).map((m) => m.epic),
      [],
      'every builder met all the others',
    );

    // Admission: under pressure one thing at a time — the first epic's setup, then its builder, which
    // lifts the pressure; nothing else started while the machine said so, and those two did not overlap.
    const pressured = marks.filter((m) => m.event === 'start' && m.pressured);
    assert.deepEqual(
      pressured.map((m) => `${m.kind} ${m.epic}`),
      [`setup ${pressured[0]?.epic ?? ''}`, `agent ${pressured[0]?.epic ?? ''}`],
      'under pressure: one setup, then its builder',
    );
    const setupEnd = marks.find((m) => m.kind === 'setup' && m.event === 'end' && m.epic === pressured[0]?.epic);
    assert.ok((setupEnd?.at ?? Infinity) <= (pressured[1]?.at ?? 0), 'the builder started after its setup ended');
    assert.match(run.stderr, /admission: new agents and heavy commands wait — CPU pressure 95 % \(at most 80 %\)/);
    assert.match(run.stderr, /admission: the machine has room again/);

    // Slots: never more setups or verifications at once than configured.
    assert.equal(intervals(marks, 'setup').length, EPICS);
    assert.ok(peak(intervals(marks, 'setup')) <= SLOTS.setup, 'setup slots');
    assert.ok(intervals(marks, 'verify').length >= EPICS);
    assert.ok(peak(intervals(marks, 'verify')) <= SLOTS.verification, 'verification slots');
    assert.match(run.stderr, /waiting for a setup slot \(1 of 1 in use\)/);
  },
);
