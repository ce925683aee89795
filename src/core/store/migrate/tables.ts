/**
 * The tables `springfield migrate` copies and compares (docs/postgres-design.md, "springfield migrate: to PostgreSQL and back"), in dependency
 * order, with the columns both backends share. Left out: `repo_id` and the host columns (PostgreSQL
 * only), PostgreSQL's `events.op_id` and `events.xid`, and SQLite's `plan_files.source` and
 * `plan_file_stats` (the bytes a step command compares to skip a parse, and the stat under which a
 * plan file's bytes last matched: caches that the next step commands fill again).
 * `plans.structure` lives in `plan_files` on SQLite and in `plans` on PostgreSQL.
 */
export const TABLE_NAMES = [
  'epics',
  'plans',
  'plan_versions',
  'steps',
  'step_deps',
  'checklist_items',
  'artifacts',
  'signals',
  'signal_locations',
  'runs',
  'verifications',
  'debt',
  'planning_notes',
  'events',
] as const;

export type TableName = (typeof TABLE_NAMES)[number];

export interface TableSpec {
  readonly name: TableName;
  /** The columns copied and dumped, in order; `id` first for tables whose rows have one. */
  readonly columns: readonly string[];
  /** Whether rows have an integer `id` (renumbered: new identity ids on PostgreSQL, 1…n on SQLite). */
  readonly id: boolean;
  /** Columns holding another table's id. */
  readonly refs: Readonly<Record<string, TableName>>;
  readonly times: readonly string[];
  /** JSON kept as text on SQLite and as jsonb on PostgreSQL. */
  readonly json: readonly string[];
  /** How rows are sorted in the dump; `id` means the row's rank. */
  readonly key: readonly string[];
}

/** A row as both sides exchange it: times as ISO-8601 strings, JSON columns parsed, ids as numbers. */
export type Row = Record<string, unknown>;
/** Every table's rows for one repository, ids ascending. */
export type Snapshot = Record<TableName, Row[]>;

function spec(
  name: TableName,
  columns: string,
  options: Partial<Omit<TableSpec, 'name' | 'columns'>> & { key: readonly string[] },
): TableSpec {
  const cols = columns.split(',').map((c) => c.trim());
  return {
    name,
    columns: cols,
    id: cols[0] === 'id',
    refs: {},
    times: cols.filter((c) => c.endsWith('_at') || c === 'at'),
    json: [],
    ...options,
  };
}

export const TABLES: readonly TableSpec[] = [
  spec(
    'epics',
    `id, title, brief, priority, complexity, complexity_source, status, status_reason, iteration, plan_iteration, max_iterations,
    merge_approved_by, merge_approved_at, worktree_path, branch, created_at, updated_at, pr_url, pr_checked_at, planner, budget_usd, budget_tokens,
    budget_minutes`,
    { id: false, key: ['id'] },
  ),
  spec('plans', 'plan_path, epic_id, plan_hash, structure, title, status, open_steps, created_at, updated_at', {
    key: ['plan_path'],
  }),
  spec(
    'plan_versions',
    `id, epic_id, plan_path, version, plan_hash, structure, body, status, feedback, proposed_by, proposed_agent, decided_by,
    created_at, decided_at`,
    { key: ['epic_id', 'version', 'id'] },
  ),
  spec(
    'steps',
    `plan_path, anchor, parent_anchor, step_index, number, title, status, claimed_by, claimed_agent, claim_token, claimed_at,
    lease_expires_at, heartbeat_at, started_at, completed_at, completed_by, completed_token, commit_hash, complete_reason, blockers, files`,
    { key: ['plan_path', 'anchor'] },
  ),
  spec('step_deps', 'plan_path, step_anchor, depends_on', { key: ['plan_path', 'step_anchor', 'depends_on'] }),
  spec('checklist_items', 'id, plan_path, step_anchor, kind, ordinal, text, status, updated_at, updated_by', {
    key: ['plan_path', 'step_anchor', 'kind', 'ordinal', 'id'],
  }),
  spec('artifacts', 'id, plan_path, step_anchor, kind, summary, recorded_by, recorded_at', {
    key: ['plan_path', 'step_anchor', 'id'],
  }),
  spec('signals', 'id, epic_id, type, summary, created_by, created_at, status, resolved_at, resolved_by, resolution', {
    key: ['id'],
  }),
  spec('signal_locations', 'id, signal_id, file, line, end_line, note', {
    refs: { signal_id: 'signals' },
    key: ['signal_id', 'id'],
  }),
  spec(
    'runs',
    `id, epic_id, plan_path, step_anchor, role, iteration, worktree, agent_id, command, pid, status, started_at, ended_at, exit_code,
    outcome_reason, claim_token, output_tail, head_before, head_after, agent_pid, launch_id, cost_usd, input_tokens, output_tokens,
    cache_read_tokens, cache_write_tokens, premium_requests`,
    { json: ['command'], key: ['id'] },
  ),
  spec(
    'verifications',
    'id, run_id, epic_id, plan_path, step_anchor, command, exit_code, verdict, duration_ms, output_tail, created_at',
    { refs: { run_id: 'runs' }, key: ['id'] },
  ),
  spec('debt', 'id, epic_id, reason, event, from_status, recorded_by, recorded_at, resolved_at, resolution', {
    key: ['epic_id', 'id'],
  }),
  spec('planning_notes', 'id, epic_id, kind, summary, recorded_by, recorded_at', { key: ['epic_id', 'id'] }),
  spec(
    'events',
    'id, at, worktree, agent, entity, action, plan_path, step_anchor, epic_id, from_status, to_status, reason, data',
    { json: ['data'], key: ['id'] },
  ),
];

/**
 * Ids inside `events.data`, by key, and the table each names (checked against every writeEvent in
 * src/core/store/{sqlite,postgres}: items, artifacts, planning notes, runs, signals). An epic's
 * retrospective also lists its failed runs (`failed_runs[].id`). Ids quoted in free text (a reason
 * such as `signal #12 accepted`) are not rewritten.
 */
export const EVENT_DATA_IDS: Readonly<Record<string, TableName>> = {
  item_id: 'checklist_items',
  artifact_id: 'artifacts',
  note_id: 'planning_notes',
  run_id: 'runs',
  signal_id: 'signals',
};

/** Rewrites the ids in one event's data through `map` (an id no row has any more → null). */
export function mapEventData(event: Row, data: unknown, map: (table: TableName, id: number) => number | null): unknown {
  if (data === null || typeof data !== 'object' || Array.isArray(data)) return data;
  const out: Record<string, unknown> = { ...(data as Record<string, unknown>) };
  for (const [key, table] of Object.entries(EVENT_DATA_IDS)) {
    const v = out[key];
    if (typeof v === 'number' && Number.isInteger(v)) out[key] = map(table, v);
  }
  if (event.entity === 'epic' && event.action === 'retrospective' && Array.isArray(out.failed_runs)) {
    out.failed_runs = out.failed_runs.map((r: unknown) => {
      const id = (r as { id?: unknown } | null)?.id;
      return typeof id === 'number' && Number.isInteger(id) ? { ...(r as object), id: map('runs', id) } : r;
    });
  }
  return out;
}

export function emptySnapshot(): Snapshot {
  const snapshot: Partial<Snapshot> = {};
  for (const t of TABLE_NAMES) snapshot[t] = [];
  return snapshot as Snapshot; // every table is set
}

/** Rows per table. */
export function countRows(s: Snapshot): Record<TableName, number> {
  return Object.fromEntries(TABLE_NAMES.map((t) => [t, s[t].length])) as Record<TableName, number>;
}

const SINGULAR: Readonly<Record<TableName, [string, string]>> = {
  epics: ['epic', 'epics'],
  plans: ['plan', 'plans'],
  plan_versions: ['plan version', 'plan versions'],
  steps: ['step', 'steps'],
  step_deps: ['dependency', 'dependencies'],
  checklist_items: ['checklist item', 'checklist items'],
  artifacts: ['artifact', 'artifacts'],
  signals: ['signal', 'signals'],
  signal_locations: ['signal location', 'signal locations'],
  runs: ['run', 'runs'],
  verifications: ['verification', 'verifications'],
  debt: ['debt entry', 'debt entries'],
  planning_notes: ['planning note', 'planning notes'],
  events: ['event', 'events'],
};

/** "3 epics, 1 plan, 40 events": the tables with rows, in table order. */
export function describeCounts(counts: Readonly<Record<TableName, number>>): string {
  return (
    TABLE_NAMES.filter((t) => counts[t] > 0)
      .map((t) => `${counts[t]} ${SINGULAR[t][counts[t] === 1 ? 0 : 1]}`)
      .join(', ') || 'no rows'
  );
}
