// The prototype schema bench/postgresRaw.ts runs against: the plans, steps, step_deps,
// checklist_items and events tables of docs/postgres-design.md (every row scoped by repository id, times as
// timestamptz from the server's clock, events carrying the client's operation id) with the readiness
// counts kept by a plpgsql trigger, plus the baseline's table. A prototype for measuring, not the
// backend's migration (that lands with the backend itself).

/** The advisory-lock class of a plan: shared by step operations, exclusive while its structure is rewritten. */
export const PLAN_LOCK_CLASS = 0x53460001;

export const REPO_ID = '0123456789abcdef0123456789abcdef01234567';
export const PLAN_PATH = 'plans/wide.md';
/** Step i depends on step i − LEAD: completions keep unblocking later steps, as a real plan's do. */
export const LEAD = 160;

/**
 * The schema; with `counter` false, plans.open_steps is left alone by the trigger (the "derived"
 * shape counts open steps through steps_open and marks the plan done after its commit).
 */
export function schema(counter: boolean): string {
  return `
CREATE TABLE plans (
  repo_id text COLLATE "C" NOT NULL,
  plan_path text COLLATE "C" NOT NULL,
  plan_hash text NOT NULL,
  status text NOT NULL DEFAULT 'active',
  open_steps integer NOT NULL DEFAULT 0,
  PRIMARY KEY (repo_id, plan_path)
);
CREATE TABLE steps (
  repo_id text COLLATE "C" NOT NULL,
  plan_path text COLLATE "C" NOT NULL,
  anchor text COLLATE "C" NOT NULL,
  parent_anchor text COLLATE "C",
  step_index integer NOT NULL,
  title text NOT NULL,
  status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'claimed', 'in_progress', 'completed')),
  claimed_host text, claimed_by text, claimed_agent text,
  claim_token bigint NOT NULL DEFAULT 0,
  claimed_at timestamptz, lease_expires_at timestamptz, heartbeat_at timestamptz, started_at timestamptz,
  completed_at timestamptz, completed_host text, completed_by text, completed_token bigint,
  commit_hash text, complete_reason text,
  blockers integer NOT NULL DEFAULT 0,
  PRIMARY KEY (repo_id, plan_path, anchor),
  FOREIGN KEY (repo_id, plan_path) REFERENCES plans ON DELETE CASCADE,
  FOREIGN KEY (repo_id, plan_path, parent_anchor) REFERENCES steps (repo_id, plan_path, anchor) ON DELETE CASCADE
);
CREATE INDEX steps_ready ON steps (repo_id, plan_path, step_index)
  WHERE parent_anchor IS NULL AND status = 'pending' AND blockers = 0;
CREATE INDEX steps_held ON steps (repo_id, plan_path, lease_expires_at)
  WHERE parent_anchor IS NULL AND status IN ('claimed', 'in_progress');
CREATE INDEX steps_open ON steps (repo_id, plan_path) WHERE parent_anchor IS NULL AND status <> 'completed';
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
  updated_at timestamptz, updated_by text,
  FOREIGN KEY (repo_id, plan_path, step_anchor) REFERENCES steps (repo_id, plan_path, anchor) ON DELETE CASCADE
);
CREATE INDEX checklist_items_step ON checklist_items (repo_id, plan_path, step_anchor, kind, ordinal);
CREATE TABLE events (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  repo_id text COLLATE "C" NOT NULL,
  op_id uuid,
  xid xid8 NOT NULL DEFAULT pg_current_xact_id(),
  at timestamptz NOT NULL,
  host text, worktree text, agent text,
  entity text NOT NULL, action text NOT NULL,
  plan_path text, step_anchor text, epic_id text,
  from_status text, to_status text, reason text, data jsonb
);
CREATE INDEX events_plan ON events (repo_id, plan_path, id);
CREATE INDEX events_op ON events (op_id) WHERE op_id IS NOT NULL;
CREATE INDEX events_xid ON events (repo_id, xid);

-- steps.blockers: unfinished dependencies of a top-level step (its own and its substeps') outside its
-- family; plans.open_steps: unfinished top-level steps. Kept right on every change into or out of
-- 'completed', as SQLite's steps_readiness_done/undone triggers do; the completion that leaves no open
-- step also marks the plan done and logs it, inside the completing statement.
CREATE FUNCTION steps_readiness() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  delta integer := CASE WHEN NEW.status = 'completed' THEN -1 ELSE 1 END;
  remaining integer;
BEGIN
  UPDATE steps t SET blockers = t.blockers + delta * d.n
  FROM (SELECT coalesce(c.parent_anchor, c.anchor) AS top, count(*) AS n
        FROM step_deps sd
        JOIN steps c ON c.repo_id = sd.repo_id AND c.plan_path = sd.plan_path AND c.anchor = sd.step_anchor
        WHERE sd.repo_id = NEW.repo_id AND sd.plan_path = NEW.plan_path AND sd.depends_on = NEW.anchor
        GROUP BY 1) d
  WHERE t.repo_id = NEW.repo_id AND t.plan_path = NEW.plan_path AND t.anchor = d.top
    AND t.anchor <> coalesce(NEW.parent_anchor, NEW.anchor);
  IF NEW.parent_anchor IS NULL AND ${counter ? 'true' : 'false'} THEN
    UPDATE plans SET open_steps = open_steps + delta,
        status = CASE WHEN open_steps + delta = 0 THEN 'done' WHEN delta > 0 THEN 'active' ELSE status END
      WHERE repo_id = NEW.repo_id AND plan_path = NEW.plan_path
      RETURNING open_steps INTO remaining;
    IF remaining = 0 AND delta < 0 THEN
      INSERT INTO events (repo_id, at, host, worktree, agent, entity, action, plan_path, from_status, to_status, reason)
      VALUES (NEW.repo_id, coalesce(NEW.completed_at, now()), NEW.completed_host, NEW.completed_by, NEW.claimed_agent, 'plan', 'complete', NEW.plan_path,
        'active', 'done', 'last step ' || NEW.anchor || ' completed');
    END IF;
  END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER steps_readiness AFTER UPDATE OF status ON steps FOR EACH ROW
  WHEN ((OLD.status = 'completed') IS DISTINCT FROM (NEW.status = 'completed'))
  EXECUTE FUNCTION steps_readiness();

CREATE TABLE counters (id integer PRIMARY KEY, n bigint NOT NULL DEFAULT 0, at timestamptz);
`;
}

/** Inserts a plan of `steps` steps (step i depends on step i − LEAD) with its readiness counts. */
export function seedPlan(steps: number): string {
  return `
INSERT INTO plans (repo_id, plan_path, plan_hash, open_steps) VALUES ('${REPO_ID}', '${PLAN_PATH}', 'bench-hash', ${steps});
INSERT INTO steps (repo_id, plan_path, anchor, step_index, title, blockers)
  SELECT '${REPO_ID}', '${PLAN_PATH}', 'w' || i, i - 1, 'Independent work ' || i, CASE WHEN i > ${LEAD} THEN 1 ELSE 0 END
  FROM generate_series(1, ${steps}) AS i;
INSERT INTO step_deps (repo_id, plan_path, step_anchor, depends_on)
  SELECT '${REPO_ID}', '${PLAN_PATH}', 'w' || i, 'w' || (i - ${LEAD}) FROM generate_series(${LEAD + 1}, ${steps}) AS i;
INSERT INTO counters (id) SELECT i FROM generate_series(0, ${steps * 2}) AS i;
ANALYZE;
`;
}
