import { existsSync, readFileSync } from 'node:fs';
import { loadSqlite, type SqlConnection } from '../../src/core/store/sqlite/sqlite.ts';
import type { LogLine } from './worker.ts';

export type ViolationKind =
  | 'integrity' // PRAGMA integrity_check / foreign_key_check not clean
  | 'not_completed' // a step left unfinished when the run should have finished the plan
  | 'double_completion' // more than one `complete` event, or more than one logged completion
  | 'duplicate_claim' // one claim token handed out twice, or tokens not increasing
  | 'wrong_holder' // completed by someone other than the holder of its final token
  | 'dependency_order' // claimed before every dependency was completed
  | 'unrecorded' // a logged claim with no event, a completed step with no event, or a garbled log
  | 'lost_completion'; // a completion a worker saw return is not in the database

export interface Violation {
  readonly kind: ViolationKind;
  readonly step: string | null;
  readonly detail: string;
}

export interface CheckOptions {
  /** The race test finishes the plan; the crash test stops half-way (default true). */
  readonly requireAllCompleted?: boolean;
}

export interface StepState {
  anchor: string;
  status: string;
  claim_token: number;
  completed_by: string | null;
  completed_token: number | null;
}

export interface StepEvent {
  readonly id: number;
  readonly action: string;
  readonly anchor: string;
  readonly worktree: string | null;
  readonly token: number | null;
}

/** Reads worker logs; only the last line may be cut short (a kill mid-write), and a worker killed early has none. */
export function readLogs(paths: readonly string[]): { lines: LogLine[]; violations: Violation[] } {
  const lines: LogLine[] = [];
  const violations: Violation[] = [];
  for (const path of paths.filter((p) => existsSync(p))) {
    const raw = readFileSync(path, 'utf8').split('\n');
    raw.forEach((text, i) => {
      if (text === '') return;
      try {
        lines.push(JSON.parse(text) as LogLine);
      } catch {
        if (i !== raw.length - 1)
          violations.push({ kind: 'unrecorded', step: null, detail: `${path}:${i + 1}: garbled log line` });
      }
    });
  }
  return { lines, violations };
}

/** Opens the database a run left behind (after every worker has exited or been killed). */
export function openForCheck(dbPath: string): SqlConnection {
  const Sqlite = loadSqlite();
  return new Sqlite(dbPath, { fileMustExist: true, timeout: 10_000 });
}

/** PRAGMA integrity_check and foreign_key_check, as violations. */
export function integrityViolations(db: SqlConnection): Violation[] {
  const out: Violation[] = [];
  const integrity = db.pragma('integrity_check', { simple: false }) as { integrity_check: string }[];
  if (integrity.length !== 1 || integrity[0]?.integrity_check !== 'ok') {
    out.push({
      kind: 'integrity',
      step: null,
      detail: `integrity_check: ${integrity.map((r) => r.integrity_check).join('; ')}`,
    });
  }
  const fk = db.pragma('foreign_key_check') as unknown[];
  if (fk.length > 0)
    out.push({ kind: 'integrity', step: null, detail: `foreign_key_check: ${JSON.stringify(fk.slice(0, 5))}` });
  return out;
}

/** Every completion a worker logged as returned must be in the database, by that worker, with that token. */
export function lostCompletions(db: SqlConnection, lines: readonly LogLine[]): Violation[] {
  return lostIn(sqliteRows(db).steps, lines);
}

function lostIn(steps: readonly StepState[], lines: readonly LogLine[]): Violation[] {
  const byAnchor = new Map(steps.map((s) => [s.anchor, s]));
  const out: Violation[] = [];
  for (const l of lines) {
    if (l.op !== 'complete' || l.step === null) continue;
    const s = byAnchor.get(l.step);
    if (!s || s.status !== 'completed' || s.completed_token !== l.token || s.completed_by !== l.worker) {
      const found = s ? `${s.status} by ${s.completed_by ?? '-'} token ${s.completed_token ?? '-'}` : 'missing';
      out.push({
        kind: 'lost_completion',
        step: l.step,
        detail: `${l.worker} completed it with token ${l.token} but the database has ${found}`,
      });
    }
  }
  return out;
}

/** What a check reads from a finished run, whichever backend holds it (PostgreSQL names holders `host:worktree`). */
export interface RunRows {
  readonly steps: readonly StepState[];
  readonly events: readonly StepEvent[];
  readonly deps: readonly { step_anchor: string; depends_on: string }[];
  readonly integrity: readonly Violation[];
}

export function sqliteRows(db: SqlConnection): RunRows {
  return {
    steps: db
      .prepare('SELECT anchor, status, claim_token, completed_by, completed_token FROM steps')
      .all() as StepState[],
    events: stepEvents(db),
    deps: db.prepare('SELECT step_anchor, depends_on FROM step_deps').all() as {
      step_anchor: string;
      depends_on: string;
    }[],
    integrity: integrityViolations(db),
  };
}

export function stepEventRow(r: {
  id: number;
  action: string;
  step_anchor: string;
  worktree: string | null;
  data: unknown;
}): StepEvent {
  const data = (r.data === null ? {} : typeof r.data === 'string' ? JSON.parse(r.data) : r.data) as {
    claim_token?: unknown;
  };
  return {
    id: r.id,
    action: r.action,
    anchor: r.step_anchor,
    worktree: r.worktree,
    token: typeof data.claim_token === 'number' ? data.claim_token : null,
  };
}

function stepEvents(db: SqlConnection): StepEvent[] {
  const rows = db
    .prepare(
      `SELECT id, action, step_anchor, worktree, data FROM events
      WHERE entity = 'step' AND action IN ('claim', 'reclaim', 'complete') ORDER BY id`,
    )
    .all() as { id: number; action: string; step_anchor: string; worktree: string | null; data: string | null }[];
  return rows.map(stepEventRow);
}

function groupBy<T>(items: readonly T[], key: (t: T) => string): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const item of items) {
    const k = key(item);
    const list = out.get(k);
    if (list) list.push(item);
    else out.set(k, [item]);
  }
  return out;
}

/**
 * Checks a finished (or killed) run of one plan: integrity, each step completed exactly once by
 * the holder of its final token, claims after dependencies, and logs consistent with events.
 */
export function checkRun(dbPath: string, logPaths: readonly string[], options: CheckOptions = {}): Violation[] {
  const { lines, violations } = readLogs(logPaths);
  const db = openForCheck(dbPath);
  try {
    return [...violations, ...checkRows(sqliteRows(db), lines, options)];
  } finally {
    db.close();
  }
}

/** The checks of checkRun on rows read from any backend. */
export function checkRows(rows: RunRows, lines: readonly LogLine[], options: CheckOptions = {}): Violation[] {
  const out: Violation[] = [...rows.integrity, ...lostIn(rows.steps, lines)];
  const { steps, events } = rows;
  const claims = groupBy(
    events.filter((e) => e.action !== 'complete'),
    (e) => e.anchor,
  );
  const completes = groupBy(
    events.filter((e) => e.action === 'complete'),
    (e) => e.anchor,
  );
  const loggedClaims = groupBy(
    lines.filter((l) => l.op === 'claim'),
    (l) => l.step ?? '',
  );
  const loggedCompletes = groupBy(
    lines.filter((l) => l.op === 'complete'),
    (l) => l.step ?? '',
  );
  for (const s of steps) {
    const v = (kind: ViolationKind, detail: string): void => void out.push({ kind, step: s.anchor, detail });
    const stepClaims = claims.get(s.anchor) ?? [];
    const stepCompletes = completes.get(s.anchor) ?? [];
    const done = s.status === 'completed';
    if (options.requireAllCompleted !== false && !done) v('not_completed', `status ${s.status}`);
    if (stepCompletes.length > 1)
      v(
        'double_completion',
        `${stepCompletes.length} complete events (by ${stepCompletes.map((e) => `${e.worktree} token ${e.token}`).join(', ')})`,
      );
    if ((loggedCompletes.get(s.anchor) ?? []).length > 1)
      v(
        'double_completion',
        `completed in the logs by ${(loggedCompletes.get(s.anchor) ?? []).map((l) => `${l.worker} token ${l.token}`).join(', ')}`,
      );
    if (done !== stepCompletes.length > 0)
      v('unrecorded', `status ${s.status} with ${stepCompletes.length} complete events`);
    let last = -Infinity;
    for (const c of stepClaims) {
      if (c.token === null || c.token <= last)
        v('duplicate_claim', `${c.action} event ${c.id} by ${c.worktree} has token ${c.token}, after token ${last}`);
      last = Math.max(last, c.token ?? last);
    }
    for (const l of loggedClaims.get(s.anchor) ?? []) {
      const match = stepClaims.filter((c) => c.token === l.token);
      if (!match.some((c) => c.worktree === l.worker))
        v('unrecorded', `${l.worker} logged claim token ${l.token} but no claim event by it has that token`);
      if (match.some((c) => c.worktree !== l.worker))
        v(
          'duplicate_claim',
          `token ${l.token} was also handed to ${match
            .filter((c) => c.worktree !== l.worker)
            .map((c) => c.worktree)
            .join(', ')} besides ${l.worker}`,
        );
    }
    if (!done) continue;
    const holder = stepClaims.filter((c) => c.token === s.completed_token);
    if (s.completed_token !== s.claim_token)
      v('wrong_holder', `completed with token ${s.completed_token} but its final token is ${s.claim_token}`);
    if (holder.length !== 1 || holder[0]?.worktree !== s.completed_by) {
      v(
        'wrong_holder',
        `completed by ${s.completed_by} with token ${s.completed_token}, which was claimed by ${holder.map((c) => c.worktree).join(', ') || 'nobody'}`,
      );
    }
    for (const e of stepCompletes) {
      if (e.worktree !== s.completed_by || e.token !== s.completed_token)
        v(
          'wrong_holder',
          `complete event ${e.id} by ${e.worktree} token ${e.token}, step says ${s.completed_by} token ${s.completed_token}`,
        );
    }
  }
  out.push(...dependencyViolations(rows.deps, claims, completes));
  return out;
}

/** No step may be claimed before the first `complete` event of each of its dependencies. */
function dependencyViolations(
  deps: RunRows['deps'],
  claims: Map<string, StepEvent[]>,
  completes: Map<string, StepEvent[]>,
): Violation[] {
  const out: Violation[] = [];
  for (const d of deps) {
    const firstClaim = claims.get(d.step_anchor)?.[0];
    if (!firstClaim) continue;
    const depDone = completes.get(d.depends_on)?.[0];
    if (!depDone || depDone.id > firstClaim.id) {
      out.push({
        kind: 'dependency_order',
        step: d.step_anchor,
        detail: `claimed at event ${firstClaim.id} but its dependency ${d.depends_on} was ${depDone ? `completed only at event ${depDone.id}` : 'never completed'}`,
      });
    }
  }
  return out;
}

/** Counts violations by kind, for assertion messages. */
export function summarize(violations: readonly Violation[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const v of violations) out[v.kind] = (out[v.kind] ?? 0) + 1;
  return out;
}
