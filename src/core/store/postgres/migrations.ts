import { PG_RUNS_MIGRATIONS } from './migrationRuns.ts';

/**
 * PostgreSQL's forward-only schema migrations (docs/postgres-design.md, "Schema" and "Migrations"). Migration 1 is
 * SQLite's migrations 1–4 in their final form, every row scoped by repository id. Never edit a
 * released migration; add one here and in ../sqlite/migrations.ts in the same change.
 */
export const PG_MIGRATIONS: readonly string[] = [
  `
  CREATE TABLE repositories (
    repo_id text COLLATE "C" PRIMARY KEY,
    source text NOT NULL CHECK (source IN ('root_commit', 'configured')),
    created_at timestamptz NOT NULL DEFAULT now()
  );
  CREATE TABLE epics (
    repo_id text COLLATE "C" NOT NULL,
    id text COLLATE "C" NOT NULL,
    title text NOT NULL,
    brief text NOT NULL DEFAULT '',
    priority text NOT NULL DEFAULT 'P2',
    complexity text NOT NULL DEFAULT 'standard',
    complexity_source text NOT NULL DEFAULT 'detected',
    status text NOT NULL DEFAULT 'planned',
    status_reason text,
    iteration integer NOT NULL DEFAULT 0,
    plan_iteration integer NOT NULL DEFAULT 0,
    max_iterations integer,
    merge_approved_by text,
    merge_approved_at timestamptz,
    worktree_path text,
    worktree_host text,
    branch text,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    PRIMARY KEY (repo_id, id)
  );
  CREATE TABLE plans (
    repo_id text COLLATE "C" NOT NULL,
    plan_path text COLLATE "C" NOT NULL,
    epic_id text COLLATE "C",
    plan_hash text NOT NULL,
    structure text NOT NULL,
    title text NOT NULL DEFAULT '',
    status text NOT NULL DEFAULT 'active',
    open_steps integer NOT NULL DEFAULT 0,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    PRIMARY KEY (repo_id, plan_path),
    FOREIGN KEY (repo_id, epic_id) REFERENCES epics (repo_id, id)
  );
  CREATE TABLE plan_versions (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    repo_id text COLLATE "C" NOT NULL,
    epic_id text COLLATE "C" NOT NULL,
    plan_path text COLLATE "C" NOT NULL,
    version integer NOT NULL,
    plan_hash text NOT NULL,
    structure text NOT NULL,
    body text NOT NULL,
    status text NOT NULL DEFAULT 'proposed',
    feedback text,
    proposed_by text,
    proposed_agent text,
    decided_by text,
    created_at timestamptz NOT NULL,
    decided_at timestamptz,
    UNIQUE (repo_id, epic_id, version),
    FOREIGN KEY (repo_id, epic_id) REFERENCES epics (repo_id, id)
  );
  CREATE TABLE steps (
    repo_id text COLLATE "C" NOT NULL,
    plan_path text COLLATE "C" NOT NULL,
    anchor text COLLATE "C" NOT NULL,
    parent_anchor text COLLATE "C",
    step_index integer NOT NULL,
    number text NOT NULL DEFAULT '',
    title text NOT NULL,
    status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'claimed', 'in_progress', 'completed')),
    claimed_host text,
    claimed_by text,
    claimed_agent text,
    claim_token bigint NOT NULL DEFAULT 0,
    claimed_at timestamptz,
    lease_expires_at timestamptz,
    heartbeat_at timestamptz,
    started_at timestamptz,
    completed_at timestamptz,
    completed_host text,
    completed_by text,
    completed_token bigint,
    commit_hash text,
    complete_reason text,
    blockers integer NOT NULL DEFAULT 0,
    PRIMARY KEY (repo_id, plan_path, anchor),
    FOREIGN KEY (repo_id, plan_path) REFERENCES plans ON DELETE CASCADE,
    FOREIGN KEY (repo_id, plan_path, parent_anchor) REFERENCES steps (repo_id, plan_path, anchor) ON DELETE CASCADE
  );
  CREATE INDEX steps_top ON steps (repo_id, plan_path, status, step_index) WHERE parent_anchor IS NULL;
  CREATE INDEX steps_parent ON steps (repo_id, plan_path, parent_anchor) WHERE parent_anchor IS NOT NULL;
  CREATE INDEX steps_ready ON steps (repo_id, plan_path, step_index) WHERE parent_anchor IS NULL AND status = 'pending' AND blockers = 0;
  CREATE INDEX steps_held ON steps (repo_id, plan_path, lease_expires_at) WHERE parent_anchor IS NULL AND status IN ('claimed', 'in_progress');
  CREATE TABLE step_deps (
    repo_id text COLLATE "C" NOT NULL,
    plan_path text COLLATE "C" NOT NULL,
    step_anchor text COLLATE "C" NOT NULL,
    depends_on text COLLATE "C" NOT NULL,
    PRIMARY KEY (repo_id, plan_path, step_anchor, depends_on),
    FOREIGN KEY (repo_id, plan_path, step_anchor) REFERENCES steps (repo_id, plan_path, anchor) ON DELETE CASCADE,
    FOREIGN KEY (repo_id, plan_path, depends_on) REFERENCES steps (repo_id, plan_path, anchor) ON DELETE CASCADE
  );
  CREATE INDEX step_deps_dependents ON step_deps (repo_id, plan_path, depends_on, step_anchor);
  CREATE TABLE checklist_items (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    repo_id text COLLATE "C" NOT NULL,
    plan_path text COLLATE "C" NOT NULL,
    step_anchor text COLLATE "C" NOT NULL,
    kind text NOT NULL CHECK (kind IN ('task', 'test', 'checkpoint')),
    ordinal integer NOT NULL,
    text text NOT NULL,
    status text NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'in_progress', 'completed')),
    updated_at timestamptz,
    updated_by text,
    FOREIGN KEY (repo_id, plan_path, step_anchor) REFERENCES steps (repo_id, plan_path, anchor) ON DELETE CASCADE
  );
  CREATE INDEX checklist_items_step ON checklist_items (repo_id, plan_path, step_anchor, kind, ordinal);
  CREATE TABLE artifacts (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    repo_id text COLLATE "C" NOT NULL,
    plan_path text COLLATE "C" NOT NULL,
    step_anchor text COLLATE "C" NOT NULL,
    kind text NOT NULL,
    summary text NOT NULL,
    recorded_by text,
    recorded_at timestamptz NOT NULL,
    FOREIGN KEY (repo_id, plan_path, step_anchor) REFERENCES steps (repo_id, plan_path, anchor) ON DELETE CASCADE
  );
  CREATE TABLE signals (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    repo_id text COLLATE "C" NOT NULL,
    epic_id text COLLATE "C" NOT NULL,
    type text NOT NULL,
    summary text NOT NULL,
    created_by text,
    created_at timestamptz NOT NULL,
    status text NOT NULL DEFAULT 'applied' CHECK (status IN ('applied', 'awaiting_person', 'decided')),
    resolved_at timestamptz,
    resolved_by text,
    resolution text,
    FOREIGN KEY (repo_id, epic_id) REFERENCES epics (repo_id, id)
  );
  CREATE TABLE signal_locations (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    signal_id bigint NOT NULL REFERENCES signals (id) ON DELETE CASCADE,
    file text NOT NULL,
    line integer NOT NULL,
    end_line integer,
    note text
  );
  CREATE TABLE runs (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    repo_id text COLLATE "C" NOT NULL,
    epic_id text COLLATE "C",
    plan_path text COLLATE "C",
    step_anchor text COLLATE "C",
    role text NOT NULL,
    iteration integer NOT NULL DEFAULT 0,
    host text,
    worktree text,
    agent_id text,
    command jsonb NOT NULL,
    pid integer,
    status text NOT NULL DEFAULT 'running',
    started_at timestamptz NOT NULL,
    ended_at timestamptz,
    exit_code integer,
    outcome_reason text,
    claim_token bigint,
    output_tail text NOT NULL DEFAULT '',
    head_before text,
    head_after text,
    agent_pid integer,
    launch_id text
  );
  CREATE INDEX runs_epic ON runs (repo_id, epic_id, role, ended_at);
  CREATE INDEX runs_status ON runs (repo_id, status) WHERE status = 'running';
  CREATE INDEX runs_launch ON runs (launch_id) WHERE launch_id IS NOT NULL;
  CREATE TABLE verifications (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    repo_id text COLLATE "C" NOT NULL,
    run_id bigint REFERENCES runs (id),
    epic_id text COLLATE "C",
    plan_path text COLLATE "C",
    step_anchor text COLLATE "C",
    command text NOT NULL,
    exit_code integer,
    verdict text NOT NULL,
    duration_ms integer NOT NULL,
    output_tail text NOT NULL DEFAULT '',
    created_at timestamptz NOT NULL
  );
  CREATE INDEX verifications_epic ON verifications (repo_id, epic_id, id);
  CREATE TABLE events (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    repo_id text COLLATE "C" NOT NULL,
    op_id uuid,
    xid xid8 NOT NULL DEFAULT pg_current_xact_id(),
    at timestamptz NOT NULL,
    host text,
    worktree text,
    agent text,
    entity text NOT NULL,
    action text NOT NULL,
    plan_path text COLLATE "C",
    step_anchor text COLLATE "C",
    epic_id text COLLATE "C",
    from_status text,
    to_status text,
    reason text,
    data jsonb
  );
  CREATE INDEX events_plan ON events (repo_id, plan_path, id);
  CREATE INDEX events_epic ON events (repo_id, epic_id, entity, id);
  CREATE INDEX events_op ON events (op_id) WHERE op_id IS NOT NULL;
  CREATE INDEX events_xid ON events (repo_id, xid);

  CREATE FUNCTION events_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    RAISE EXCEPTION 'events are append-only';
  END $$;
  CREATE TRIGGER events_append_only BEFORE UPDATE OR DELETE ON events FOR EACH ROW EXECUTE FUNCTION events_append_only();
  CREATE TRIGGER events_no_truncate BEFORE TRUNCATE ON events FOR EACH STATEMENT EXECUTE FUNCTION events_append_only();

  -- steps.blockers and plans.open_steps, kept as SQLite's steps_readiness_done/undone triggers keep them.
  CREATE FUNCTION steps_readiness() RETURNS trigger LANGUAGE plpgsql AS $$
  DECLARE
    delta integer := CASE WHEN NEW.status = 'completed' THEN -1 ELSE 1 END;
  BEGIN
    UPDATE steps t SET blockers = t.blockers + delta * d.n
    FROM (SELECT coalesce(c.parent_anchor, c.anchor) AS top, count(*) AS n
          FROM step_deps sd
          JOIN steps c ON c.repo_id = sd.repo_id AND c.plan_path = sd.plan_path AND c.anchor = sd.step_anchor
          WHERE sd.repo_id = NEW.repo_id AND sd.plan_path = NEW.plan_path AND sd.depends_on = NEW.anchor
          GROUP BY 1) d
    WHERE t.repo_id = NEW.repo_id AND t.plan_path = NEW.plan_path AND t.anchor = d.top
      AND t.anchor <> coalesce(NEW.parent_anchor, NEW.anchor);
    IF NEW.parent_anchor IS NULL THEN
      UPDATE plans SET open_steps = open_steps + delta WHERE repo_id = NEW.repo_id AND plan_path = NEW.plan_path;
    END IF;
    RETURN NULL;
  END $$;
  CREATE TRIGGER steps_readiness AFTER UPDATE OF status ON steps FOR EACH ROW
    WHEN ((OLD.status = 'completed') IS DISTINCT FROM (NEW.status = 'completed'))
    EXECUTE FUNCTION steps_readiness();

  -- Aborts the transaction when a guarded write changed nothing (a write sent with its COMMIT checks itself).
  CREATE FUNCTION sf_expect(changed bigint, expected bigint, message text) RETURNS bigint LANGUAGE plpgsql AS $$
  BEGIN
    IF changed <> expected THEN RAISE EXCEPTION USING ERRCODE = 'SF001', MESSAGE = message; END IF;
    RETURN changed;
  END $$;

  -- One notification per repository per statement that logs events (docs/postgres-design.md, "Live updates").
  CREATE FUNCTION events_notify() RETURNS trigger LANGUAGE plpgsql AS $$
  DECLARE r record;
  BEGIN
    FOR r IN SELECT repo_id, min(id) AS first, max(id) AS last, max(host) AS host FROM added GROUP BY repo_id LOOP
      PERFORM pg_notify('sf_' || left(encode(sha256(convert_to(r.repo_id, 'UTF8')), 'hex'), 40),
        json_build_object('v', 1, 'xid', pg_current_xact_id()::text, 'first', r.first, 'last', r.last, 'host', r.host)::text);
    END LOOP;
    RETURN NULL;
  END $$;
  CREATE TRIGGER events_notify AFTER INSERT ON events REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION events_notify();
  `,
  // 2: SQLite's migration 5, the epic lifecycle's tables (docs/lifecycle.md): the debt register (a row each
  // time an epic is set aside, closed when a person resumes it) and a planner's research notes. The runs
  // branch's migration adds migration 5's columns of runs and epics. SQLite's migration 6 (plans.source,
  // the bytes last matched) is a step command's parse-free fast path there; this backend compares hashes.
  `
  CREATE TABLE debt (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    repo_id text COLLATE "C" NOT NULL,
    epic_id text COLLATE "C" NOT NULL,
    reason text NOT NULL,
    event text NOT NULL,
    from_status text NOT NULL,
    recorded_by text,
    recorded_at timestamptz NOT NULL,
    resolved_at timestamptz,
    resolution text,
    FOREIGN KEY (repo_id, epic_id) REFERENCES epics (repo_id, id)
  );
  CREATE INDEX debt_epic ON debt (repo_id, epic_id, resolved_at);
  CREATE TABLE planning_notes (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    repo_id text COLLATE "C" NOT NULL,
    epic_id text COLLATE "C" NOT NULL,
    kind text NOT NULL,
    summary text NOT NULL,
    recorded_by text,
    recorded_at timestamptz NOT NULL,
    FOREIGN KEY (repo_id, epic_id) REFERENCES epics (repo_id, id)
  );
  CREATE INDEX planning_notes_epic ON planning_notes (repo_id, epic_id, id);
  CREATE INDEX plan_versions_epic ON plan_versions (repo_id, epic_id, status, version);
  CREATE INDEX plans_epic ON plans (repo_id, epic_id, updated_at) WHERE epic_id IS NOT NULL;
  `,
  ...PG_RUNS_MIGRATIONS,
  // 4: the notification leaves the write's transaction (docs/postgres-design.md, "Live updates"): a NOTIFY holds the
  // server-wide notification lock until its transaction's commit is on disk, so this trigger made every
  // writer of every repository commit one at a time. Each write now notifies after its COMMIT, in the
  // same round trip (./notify.ts).
  `
  DROP TRIGGER events_notify ON events;
  DROP FUNCTION events_notify();
  `,
  // 5: a plan's open-step count leaves its row for 16 counters (docs/postgres-design.md, "Concurrency"). Every
  // completion of a top-level step changed plans.open_steps, so it held the plan's row until its commit
  // was on disk and the completions of one plan committed one at a time. A completion now changes the
  // counter of its step's shard; the count is their sum. No foreign key: checking one would lock the
  // plan's row again (prune removes the counters with the plan).
  `
  CREATE TABLE plan_open (
    repo_id text COLLATE "C" NOT NULL,
    plan_path text COLLATE "C" NOT NULL,
    shard smallint NOT NULL,
    n integer NOT NULL,
    PRIMARY KEY (repo_id, plan_path, shard)
  );
  INSERT INTO plan_open (repo_id, plan_path, shard, n)
    SELECT repo_id, plan_path, (hashtext(anchor) & 15)::smallint, count(*) FROM steps
    WHERE parent_anchor IS NULL AND status <> 'completed' GROUP BY 1, 2, 3;
  ALTER TABLE plans DROP COLUMN open_steps;
  -- The dependents' counts are changed one row at a time, each found by its whole key: as one UPDATE …
  -- FROM, the function's cached generic plan (made while the tables were empty) scanned every step of
  -- the plan on each completion (about 1 ms of a 1,200-step plan's 1.3).
  CREATE OR REPLACE FUNCTION steps_readiness() RETURNS trigger LANGUAGE plpgsql AS $$
  DECLARE
    delta integer := CASE WHEN NEW.status = 'completed' THEN -1 ELSE 1 END;
    d record;
  BEGIN
    FOR d IN SELECT coalesce(c.parent_anchor, c.anchor) AS top, count(*) AS n
          FROM step_deps sd
          JOIN steps c ON c.repo_id = sd.repo_id AND c.plan_path = sd.plan_path AND c.anchor = sd.step_anchor
          WHERE sd.repo_id = NEW.repo_id AND sd.plan_path = NEW.plan_path AND sd.depends_on = NEW.anchor
          GROUP BY 1 LOOP
      IF d.top <> coalesce(NEW.parent_anchor, NEW.anchor) THEN
        UPDATE steps SET blockers = blockers + delta * d.n WHERE repo_id = NEW.repo_id AND plan_path = NEW.plan_path AND anchor = d.top;
      END IF;
    END LOOP;
    IF NEW.parent_anchor IS NULL THEN
      INSERT INTO plan_open AS o (repo_id, plan_path, shard, n) VALUES (NEW.repo_id, NEW.plan_path, (hashtext(NEW.anchor) & 15)::smallint, delta)
        ON CONFLICT (repo_id, plan_path, shard) DO UPDATE SET n = o.n + delta;
    END IF;
    RETURN NULL;
  END $$;
  `,
  // 6: SQLite's migration 9, who plans an epic (docs/lifecycle.md, "Who plans").
  `
  ALTER TABLE epics ADD COLUMN planner text NOT NULL DEFAULT 'lisa' CHECK (planner IN ('lisa', 'person'));
  `,
  // 7: SQLite's migration 10, an epic's own cost budget (docs/budgets.md), and the day's spend by the runs' end.
  `
  ALTER TABLE epics ADD COLUMN budget_usd double precision CHECK (budget_usd IS NULL OR budget_usd > 0);
  ALTER TABLE epics ADD COLUMN budget_tokens bigint CHECK (budget_tokens IS NULL OR budget_tokens > 0);
  ALTER TABLE epics ADD COLUMN budget_minutes double precision CHECK (budget_minutes IS NULL OR budget_minutes > 0);
  CREATE INDEX runs_ended ON runs (repo_id, ended_at) WHERE ended_at IS NOT NULL;
  `,
  // 8: SQLite's migration 11, the ports reserved for worktrees (docs/worktrees.md, "Ports"). A host's
  // ports are shared by every repository on it, so the keys have no repository: two clones' schedulers
  // on one machine never hand out the same block.
  `
  CREATE TABLE port_blocks (
    host text COLLATE "C" NOT NULL,
    first_port integer NOT NULL,
    count integer NOT NULL CHECK (count > 0),
    worktree text COLLATE "C" NOT NULL,
    repo_id text COLLATE "C" NOT NULL,
    epic_id text NOT NULL,
    reserved_at timestamptz NOT NULL,
    PRIMARY KEY (host, first_port),
    UNIQUE (host, worktree)
  );
  `,
  // 9: SQLite's migration 12, each step's declared files (docs/files.md, "Claims by agents themselves").
  `
  ALTER TABLE steps ADD COLUMN files text;
  CREATE INDEX steps_files ON steps (repo_id, plan_path) WHERE files IS NOT NULL;
  CREATE INDEX steps_files_held ON steps (repo_id) WHERE files IS NOT NULL AND parent_anchor IS NULL AND status IN ('claimed', 'in_progress');
  `,
];

export const PG_SCHEMA_VERSION = PG_MIGRATIONS.length;
