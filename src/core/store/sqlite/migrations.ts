/**
 * The schema version this program writes: the number of migrations (a test holds the two together).
 * Bump it with each migration added below.
 */
export const SCHEMA_VERSION = 13;

/**
 * Forward-only schema migrations. Each runs once, in order, inside the same transaction that bumps
 * `PRAGMA user_version`. Never edit a released migration; add a new one. A function, not a constant:
 * every command opens the store but almost none migrates it, and the step commands' code cache then
 * holds none of this text (docs/cli-cost.md, "The step store").
 */
export function migrations(): readonly string[] {
  return [
    // 1: plans, steps, checklists, leases, epics, approval, signals, runs, verifications, events.
    `
  CREATE TABLE epics (
    id TEXT PRIMARY KEY,
    title TEXT NOT NULL,
    brief TEXT NOT NULL DEFAULT '',
    priority TEXT NOT NULL DEFAULT 'P2',
    complexity TEXT NOT NULL DEFAULT 'standard',
    complexity_source TEXT NOT NULL DEFAULT 'detected',
    status TEXT NOT NULL DEFAULT 'planned',
    status_reason TEXT,
    iteration INTEGER NOT NULL DEFAULT 0,
    plan_iteration INTEGER NOT NULL DEFAULT 0,
    max_iterations INTEGER,
    merge_approved_by TEXT,
    merge_approved_at TEXT,
    worktree_path TEXT,
    branch TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
  );

  CREATE TABLE plans (
    plan_path TEXT PRIMARY KEY,
    epic_id TEXT REFERENCES epics(id),
    plan_hash TEXT NOT NULL,
    structure TEXT NOT NULL,
    title TEXT NOT NULL DEFAULT '',
    status TEXT NOT NULL DEFAULT 'active',
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
  );

  CREATE TABLE plan_versions (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    epic_id TEXT NOT NULL REFERENCES epics(id),
    plan_path TEXT NOT NULL,
    version INTEGER NOT NULL,
    plan_hash TEXT NOT NULL,
    structure TEXT NOT NULL,
    body TEXT NOT NULL,
    status TEXT NOT NULL DEFAULT 'proposed',
    feedback TEXT,
    proposed_by TEXT,
    proposed_agent TEXT,
    decided_by TEXT,
    created_at TEXT NOT NULL,
    decided_at TEXT,
    UNIQUE (epic_id, version)
  );

  CREATE TABLE steps (
    plan_path TEXT NOT NULL REFERENCES plans(plan_path) ON DELETE CASCADE,
    anchor TEXT NOT NULL,
    parent_anchor TEXT,
    step_index INTEGER NOT NULL,
    number TEXT NOT NULL DEFAULT '',
    title TEXT NOT NULL,
    status TEXT NOT NULL DEFAULT 'pending'
      CHECK (status IN ('pending', 'claimed', 'in_progress', 'completed')),
    claimed_by TEXT,
    claimed_agent TEXT,
    claim_token INTEGER NOT NULL DEFAULT 0,
    claimed_at TEXT,
    lease_expires_at TEXT,
    heartbeat_at TEXT,
    started_at TEXT,
    completed_at TEXT,
    completed_by TEXT,
    completed_token INTEGER,
    commit_hash TEXT,
    complete_reason TEXT,
    PRIMARY KEY (plan_path, anchor),
    FOREIGN KEY (plan_path, parent_anchor) REFERENCES steps(plan_path, anchor) ON DELETE CASCADE
  );
  CREATE INDEX idx_steps_top ON steps(plan_path, status, step_index) WHERE parent_anchor IS NULL;
  CREATE INDEX idx_steps_parent ON steps(plan_path, parent_anchor) WHERE parent_anchor IS NOT NULL;

  CREATE TABLE step_deps (
    plan_path TEXT NOT NULL,
    step_anchor TEXT NOT NULL,
    depends_on TEXT NOT NULL,
    PRIMARY KEY (plan_path, step_anchor, depends_on),
    FOREIGN KEY (plan_path, step_anchor) REFERENCES steps(plan_path, anchor) ON DELETE CASCADE,
    FOREIGN KEY (plan_path, depends_on) REFERENCES steps(plan_path, anchor) ON DELETE CASCADE
  );
  CREATE INDEX idx_deps_target ON step_deps(plan_path, depends_on);

  CREATE TABLE checklist_items (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    plan_path TEXT NOT NULL,
    step_anchor TEXT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('task', 'test', 'checkpoint')),
    ordinal INTEGER NOT NULL,
    text TEXT NOT NULL,
    status TEXT NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'in_progress', 'completed')),
    updated_at TEXT,
    updated_by TEXT,
    FOREIGN KEY (plan_path, step_anchor) REFERENCES steps(plan_path, anchor) ON DELETE CASCADE
  );
  CREATE INDEX idx_items_step ON checklist_items(plan_path, step_anchor, kind, ordinal);

  CREATE TABLE artifacts (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    plan_path TEXT NOT NULL,
    step_anchor TEXT NOT NULL,
    kind TEXT NOT NULL,
    summary TEXT NOT NULL,
    recorded_by TEXT,
    recorded_at TEXT NOT NULL,
    FOREIGN KEY (plan_path, step_anchor) REFERENCES steps(plan_path, anchor) ON DELETE CASCADE
  );
  CREATE INDEX idx_artifacts_step ON artifacts(plan_path, step_anchor);

  CREATE TABLE signals (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    epic_id TEXT NOT NULL REFERENCES epics(id),
    type TEXT NOT NULL,
    summary TEXT NOT NULL,
    created_by TEXT,
    created_at TEXT NOT NULL,
    status TEXT NOT NULL DEFAULT 'applied' CHECK (status IN ('applied', 'awaiting_person', 'decided')),
    resolved_at TEXT,
    resolved_by TEXT,
    resolution TEXT
  );
  CREATE TABLE signal_locations (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    signal_id INTEGER NOT NULL REFERENCES signals(id) ON DELETE CASCADE,
    file TEXT NOT NULL,
    line INTEGER NOT NULL,
    end_line INTEGER,
    note TEXT
  );

  CREATE TABLE runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    epic_id TEXT,
    plan_path TEXT,
    step_anchor TEXT,
    role TEXT NOT NULL,
    iteration INTEGER NOT NULL DEFAULT 0,
    worktree TEXT,
    agent_id TEXT,
    command TEXT NOT NULL,
    pid INTEGER,
    status TEXT NOT NULL DEFAULT 'running',
    started_at TEXT NOT NULL,
    ended_at TEXT,
    exit_code INTEGER
  );

  CREATE TABLE verifications (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id INTEGER REFERENCES runs(id),
    epic_id TEXT,
    plan_path TEXT,
    step_anchor TEXT,
    command TEXT NOT NULL,
    exit_code INTEGER,
    verdict TEXT NOT NULL,
    duration_ms INTEGER NOT NULL,
    output_tail TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL
  );

  CREATE TABLE events (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    at TEXT NOT NULL,
    worktree TEXT,
    agent TEXT,
    entity TEXT NOT NULL,
    action TEXT NOT NULL,
    plan_path TEXT,
    step_anchor TEXT,
    epic_id TEXT,
    from_status TEXT,
    to_status TEXT,
    reason TEXT,
    data TEXT
  );
  CREATE INDEX idx_events_plan ON events(plan_path, id);
  CREATE INDEX idx_events_epic ON events(epic_id, entity, id);
  CREATE INDEX idx_runs_epic ON runs(epic_id, role, ended_at);
  CREATE INDEX idx_runs_status ON runs(status) WHERE status = 'running';
  CREATE INDEX idx_verifications_epic ON verifications(epic_id, id);
  CREATE TRIGGER events_append_only_update BEFORE UPDATE ON events
    BEGIN SELECT RAISE(ABORT, 'events are append-only'); END;
  CREATE TRIGGER events_append_only_delete BEFORE DELETE ON events
    BEGIN SELECT RAISE(ABORT, 'events are append-only'); END;
  `,
    // 2: stored readiness. steps.blockers counts a top-level step's dependencies (its own and its
    // substeps') on unfinished steps outside its family; plans.open_steps counts a plan's unfinished
    // top-level steps. Triggers keep both right on every status change, so a claim finds the next
    // ready step with one index seek; initPlan recomputes both after rewriting a plan's structure.
    `
  ALTER TABLE steps ADD COLUMN blockers INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE plans ADD COLUMN open_steps INTEGER NOT NULL DEFAULT 0;
  UPDATE steps SET blockers = b.n FROM (
    SELECT c.plan_path AS plan_path, coalesce(c.parent_anchor, c.anchor) AS top, COUNT(*) AS n
    FROM step_deps d
    JOIN steps c ON c.plan_path = d.plan_path AND c.anchor = d.step_anchor
    JOIN steps dep ON dep.plan_path = d.plan_path AND dep.anchor = d.depends_on
    WHERE dep.status != 'completed' AND coalesce(dep.parent_anchor, dep.anchor) != coalesce(c.parent_anchor, c.anchor)
    GROUP BY 1, 2) AS b
  WHERE steps.plan_path = b.plan_path AND steps.anchor = b.top;
  UPDATE plans SET open_steps = (SELECT COUNT(*) FROM steps s WHERE s.plan_path = plans.plan_path AND s.parent_anchor IS NULL AND s.status != 'completed');
  CREATE INDEX idx_steps_ready ON steps(plan_path, step_index) WHERE parent_anchor IS NULL AND status = 'pending' AND blockers = 0;
  CREATE TRIGGER steps_readiness_done AFTER UPDATE OF status ON steps
    WHEN old.status != 'completed' AND new.status = 'completed'
  BEGIN
    UPDATE steps SET blockers = blockers - (
        SELECT COUNT(*) FROM step_deps d JOIN steps c ON c.plan_path = d.plan_path AND c.anchor = d.step_anchor
        WHERE d.plan_path = new.plan_path AND d.depends_on = new.anchor AND coalesce(c.parent_anchor, c.anchor) = steps.anchor)
      WHERE plan_path = new.plan_path AND anchor != coalesce(new.parent_anchor, new.anchor) AND anchor IN (
        SELECT coalesce(c.parent_anchor, c.anchor) FROM step_deps d JOIN steps c ON c.plan_path = d.plan_path AND c.anchor = d.step_anchor
        WHERE d.plan_path = new.plan_path AND d.depends_on = new.anchor);
    UPDATE plans SET open_steps = open_steps - 1 WHERE plan_path = new.plan_path AND new.parent_anchor IS NULL;
  END;
  CREATE TRIGGER steps_readiness_undone AFTER UPDATE OF status ON steps
    WHEN old.status = 'completed' AND new.status != 'completed'
  BEGIN
    UPDATE steps SET blockers = blockers + (
        SELECT COUNT(*) FROM step_deps d JOIN steps c ON c.plan_path = d.plan_path AND c.anchor = d.step_anchor
        WHERE d.plan_path = new.plan_path AND d.depends_on = new.anchor AND coalesce(c.parent_anchor, c.anchor) = steps.anchor)
      WHERE plan_path = new.plan_path AND anchor != coalesce(new.parent_anchor, new.anchor) AND anchor IN (
        SELECT coalesce(c.parent_anchor, c.anchor) FROM step_deps d JOIN steps c ON c.plan_path = d.plan_path AND c.anchor = d.step_anchor
        WHERE d.plan_path = new.plan_path AND d.depends_on = new.anchor);
    UPDATE plans SET open_steps = open_steps + 1 WHERE plan_path = new.plan_path AND new.parent_anchor IS NULL;
  END;
  `,
    // 3: the readiness triggers look up a completed step's dependents; with the dependent in the index
    // it covers the lookup, so SQLite stops preferring a scan of the plan's whole primary key.
    `
  CREATE INDEX idx_deps_dependents ON step_deps(plan_path, depends_on, step_anchor);
  DROP INDEX idx_deps_target;
  `,
    // 4: agent faults (docs/scheduler-faults.md). A run's status is its outcome: succeeded, failed,
    // timed_out, lost or no_progress (the old 'killed' is a failure by signal). Each run keeps why it
    // ended, the last lines of its output, the worktree's commit before and after it, the agent's
    // process group, the claim token it held, and the scheduler's launch id that ties a launch to its row.
    `
  ALTER TABLE runs ADD COLUMN outcome_reason TEXT;
  ALTER TABLE runs ADD COLUMN claim_token INTEGER;
  ALTER TABLE runs ADD COLUMN output_tail TEXT NOT NULL DEFAULT '';
  ALTER TABLE runs ADD COLUMN head_before TEXT;
  ALTER TABLE runs ADD COLUMN head_after TEXT;
  ALTER TABLE runs ADD COLUMN agent_pid INTEGER;
  ALTER TABLE runs ADD COLUMN launch_id TEXT;
  UPDATE runs SET status = 'failed', outcome_reason = 'ended by a signal' WHERE status = 'killed';
  CREATE INDEX idx_runs_launch ON runs(launch_id) WHERE launch_id IS NOT NULL;
  `,
    // 5: the epic lifecycle (docs/lifecycle.md). The debt register: one row each time an epic is set
    // aside (deferred, a discarded plan), closed when a person resumes it. Planning notes: what Lisa
    // researched for an epic before any step exists, shown to her next session after a request for changes.
    // PR mode: the pull request a verified epic waits on, and when its state was last asked. Per run: the
    // tokens and cost its agent reported in its output, when the role's config says how to read them.
    `
  CREATE TABLE debt (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    epic_id TEXT NOT NULL REFERENCES epics(id),
    reason TEXT NOT NULL,
    event TEXT NOT NULL,
    from_status TEXT NOT NULL,
    recorded_by TEXT,
    recorded_at TEXT NOT NULL,
    resolved_at TEXT,
    resolution TEXT
  );
  CREATE INDEX idx_debt_epic ON debt(epic_id, resolved_at);
  CREATE TABLE planning_notes (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    epic_id TEXT NOT NULL REFERENCES epics(id),
    kind TEXT NOT NULL,
    summary TEXT NOT NULL,
    recorded_by TEXT,
    recorded_at TEXT NOT NULL
  );
  CREATE INDEX idx_planning_notes_epic ON planning_notes(epic_id, id);
  ALTER TABLE epics ADD COLUMN pr_url TEXT;
  ALTER TABLE epics ADD COLUMN pr_checked_at TEXT;
  ALTER TABLE runs ADD COLUMN cost_usd REAL;
  ALTER TABLE runs ADD COLUMN input_tokens INTEGER;
  ALTER TABLE runs ADD COLUMN output_tokens INTEGER;
  ALTER TABLE runs ADD COLUMN cache_read_tokens INTEGER;
  ALTER TABLE runs ADD COLUMN cache_write_tokens INTEGER;
  ALTER TABLE runs ADD COLUMN premium_requests REAL;
  `,
    // 6: the plan file's bytes last seen to have the stored structure (docs/cli-cost.md): a step command
    // whose file still has exactly these bytes needs no parse to know the plan has not drifted.
    `
  ALTER TABLE plans ADD COLUMN source BLOB;
  `,
    // 7: the plan file's bytes and structure move out of the plans row (docs/cli-cost.md). Columns
    // after a large value sit behind its overflow pages, which SQLite reads to reach them: reading
    // open_steps or source read the whole structure (~170 pages on a 2,000-step plan) on every call.
    `
  CREATE TABLE plan_files (
    plan_path TEXT PRIMARY KEY REFERENCES plans(plan_path) ON DELETE CASCADE,
    source BLOB,
    structure TEXT NOT NULL
  );
  INSERT INTO plan_files (plan_path, source, structure) SELECT plan_path, source, structure FROM plans;
  ALTER TABLE plans DROP COLUMN source;
  ALTER TABLE plans DROP COLUMN structure;
  `,
    // 8: an epic's runs of one role, newest first, without sorting them all: the scheduler counts a
    // role's failures in a row on every tick (docs/scheduler.md) and stops at the first success.
    `
  CREATE INDEX idx_runs_epic_newest ON runs(epic_id, role, id);
  `,
    // 9: who plans an epic (docs/lifecycle.md, "Who plans"): Lisa, or the person who created it, whose
    // epic the scheduler then never plans.
    `
  ALTER TABLE epics ADD COLUMN planner TEXT NOT NULL DEFAULT 'lisa' CHECK (planner IN ('lisa', 'person'));
  `,
    // 10: an epic's own cost budget (docs/budgets.md): dollars, tokens and agent minutes it may spend,
    // each null when the config's "budget" applies; and the day's spend, summed over runs by their end.
    `
  ALTER TABLE epics ADD COLUMN budget_usd REAL CHECK (budget_usd IS NULL OR budget_usd > 0);
  ALTER TABLE epics ADD COLUMN budget_tokens INTEGER CHECK (budget_tokens IS NULL OR budget_tokens > 0);
  ALTER TABLE epics ADD COLUMN budget_minutes REAL CHECK (budget_minutes IS NULL OR budget_minutes > 0);
  CREATE INDEX idx_runs_ended ON runs(ended_at) WHERE ended_at IS NOT NULL;
  `,
    // 11: the ports reserved for worktrees (docs/worktrees.md, "Ports"): one block per worktree and host,
    // no two blocks of a host starting at the same port (blocks are aligned, so that is no overlap).
    `
  CREATE TABLE port_blocks (
    host TEXT NOT NULL,
    first_port INTEGER NOT NULL,
    count INTEGER NOT NULL CHECK (count > 0),
    worktree TEXT NOT NULL,
    epic_id TEXT NOT NULL,
    reserved_at TEXT NOT NULL,
    PRIMARY KEY (host, first_port),
    UNIQUE (host, worktree)
  );
  `,
    // 12: each step's declared files (docs/files.md, "Claims by agents themselves"): the JSON array of the
    // globs of its **Files:** lines (a top-level step's with its substeps'), NULL when it declares none.
    // A claim of a step with files reads the steps held with files; plans without any pay nothing.
    `
  ALTER TABLE steps ADD COLUMN files TEXT;
  CREATE INDEX idx_steps_files ON steps(plan_path) WHERE files IS NOT NULL;
  CREATE INDEX idx_steps_files_held ON steps(status) WHERE files IS NOT NULL AND parent_anchor IS NULL AND status IN ('claimed', 'in_progress');
  `,
    // 13: per plan file on this host (a worktree's checkout of a plan), the stat under which its bytes last
    // matched a plan's structure, and that structure's hash: a step command finding the file unchanged since
    // reads none of it (docs/cli-cost.md, "Unchanged plan files"). A row whose hash is not the plan's is ignored.
    `
  CREATE TABLE plan_file_stats (
    file TEXT PRIMARY KEY,
    stat TEXT NOT NULL,
    plan_hash TEXT NOT NULL
  );
  `,
  ];
}
