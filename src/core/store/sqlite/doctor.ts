import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { shellQuote } from '../../shellQuote.ts';
import type { DoctorInput, Finding } from '../maintenanceTypes.ts';
import { Checklist, commandFinding as command } from '../shared/checklist.ts';
import { planRoots } from '../shared/planRoots.ts';
import { checkIntegrity } from './integrity.ts';
import { findOrphanedPlans, foreignKeyViolations, PLAN_CHILD_TABLES } from './maintenance.ts';
import { SCHEMA_VERSION } from './migrations.ts';
import { connect, type SqlConnection } from './sqlite.ts';
import { messageOf } from '../../../shared/errorMessage.ts';

/**
 * Copies what SQLite can still read into `<db>.recovered`, with the schema version (.dump leaves it
 * out, and Springfield would then try to create the tables again) and WAL mode. Needs the sqlite3 tool.
 */
function salvage(db: string, version: number): string {
  const to = shellQuote(`${db}.recovered`);
  return `{ sqlite3 ${shellQuote(db)} .dump && echo 'PRAGMA user_version = ${version}; PRAGMA journal_mode = WAL;'; } | sqlite3 ${to} >/dev/null`;
}

const SALVAGE_NEXT =
  "then stop every agent, move the .recovered file into place (removing the old file's -wal and -shm) and run 'springfield doctor'";

/** Moves a file (or directory) that is not a database out of the way; init and reconcile then rebuild the state. */
function moveAside(db: string, now: Date): string {
  return `mv -- ${shellQuote(db)} ${shellQuote(`${db}.broken-${now.toISOString().replace(/[-:]|\.\d+/g, '')}`)}`;
}

const REBUILD =
  "then 'springfield init <plan.md>' for each plan and 'springfield reconcile' to take completions back from commit trailers";

/**
 * Diagnoses the database and its links to the worktrees and PLAN.md into `list`, read-only: it opens
 * the file itself, so a database the store would refuse to open is still diagnosed.
 */
export function diagnoseDatabase(input: DoctorInput, list: Checklist): void {
  const check: Check = (...args) => list.check(...args);
  const skip = (name: string, detail: string) => list.skip(name, detail);
  const db = openReadOnly(input, check);
  if (db) {
    try {
      const sane = databaseChecks(db, input, check, skip);
      const names = ['orphaned_plans', 'expired_leases', 'missing_holders', 'plan_md'];
      if (sane) stateChecks(db, input, check, skip);
      else for (const n of names) skip(n, 'database is not at the current schema or not intact');
    } catch (err) {
      // Damage past what integrity_check could report (it throws on some): nothing here is readable.
      if (!String((err as { code?: unknown }).code ?? '').startsWith('SQLITE_')) throw err;
      check('readable', [unreadable(input, err)], '', 'unreadable');
    } finally {
      db.close();
    }
  }
}

type Check = (name: string, found: Finding[], okDetail: string, badDetail?: string) => void;

function openReadOnly(input: DoctorInput, check: Check): SqlConnection | null {
  const path = input.dbPath;
  const stat = statSync(path, { throwIfNoEntry: false });
  if (!stat) {
    check(
      'database',
      [
        {
          severity: 'warning',
          code: 'no_database',
          message: `no state database at ${path} yet`,
          fix: 'springfield init <plan.md>  # with your plan file',
          command: null,
        },
      ],
      '',
      'missing',
    );
    return null;
  }
  if (stat.isDirectory()) {
    check(
      'database',
      [
        command(
          'error',
          'database_is_directory',
          `${path} is a directory, not a database`,
          moveAside(path, input.now),
          REBUILD,
        ),
      ],
      '',
      'a directory',
    );
    return null;
  }
  let db: SqlConnection | undefined;
  try {
    db = connect(path, { readonly: true, fileMustExist: true, timeout: 5000 });
    db.prepare('SELECT COUNT(*) FROM sqlite_master').pluck().get(); // reads the schema itself, not just the header
    check('database', [], path);
    return db;
  } catch (err) {
    db?.close();
    check('database', [unreadable(input, err)], '', 'unreadable');
    return null;
  }
}

/**
 * A database SQLite cannot read: permissions are for the person to look at; a file that is no
 * database, or one whose schema is damaged, has nothing .dump could take, so it is moved aside.
 */
function unreadable(input: DoctorInput, err: unknown): Finding {
  const path = input.dbPath;
  const code = String((err as { code?: unknown }).code ?? '');
  const message = `cannot read ${path}: ${messageOf(err)}`;
  if (/^SQLITE_(CANTOPEN|PERM|READONLY|AUTH)/.test(code)) {
    return {
      severity: 'error',
      code: 'database_unreadable',
      message,
      fix: `check who may read ${path} and its folder (ls -l), and that nothing else holds it`,
      command: null,
    };
  }
  return command(
    'error',
    code === 'SQLITE_NOTADB' ? 'not_a_database' : 'database_unreadable',
    message,
    moveAside(path, input.now),
    REBUILD,
  );
}

/** Integrity, schema version, journal mode, foreign keys; true when the state checks can run. */
function databaseChecks(
  db: SqlConnection,
  input: DoctorInput,
  check: Check,
  skip: (name: string, detail: string) => void,
): boolean {
  const integrity = checkIntegrity(db, input.full ?? false);
  const intact = integrity.problems.length === 0;
  const version = Number(db.pragma('user_version', { simple: true }));
  const salvageable = [
    command(
      'error',
      'integrity_check_failed',
      `integrity_check: ${integrity.problems.slice(0, 3).join('; ')}`,
      salvage(input.dbPath, version),
      SALVAGE_NEXT,
    ),
  ];
  check('integrity', intact ? [] : salvageable, `ok (${integrity.scope})`, `failed (${integrity.scope})`);
  const schema: Finding[] = [];
  if (version > SCHEMA_VERSION) {
    schema.push({
      severity: 'error',
      code: 'schema_too_new',
      message: `schema version ${version} is newer than this Springfield supports (${SCHEMA_VERSION})`,
      fix: `use the newer Springfield that wrote it (one that knows schema version ${version}); this one may not write it, so it suggests nothing else`,
      command: null,
    });
  } else if (version < SCHEMA_VERSION) {
    schema.push(
      command(
        'warning',
        'schema_outdated',
        `schema version ${version}, current is ${SCHEMA_VERSION}; the next write migrates it`,
        'springfield reconcile',
        'any write migrates it',
      ),
    );
  }
  check('schema', schema, `version ${version}`, `version ${version} (expected ${SCHEMA_VERSION})`);
  if (version > SCHEMA_VERSION) {
    // Every fix for these would be a write this Springfield refuses to make.
    for (const name of ['journal_mode', 'foreign_keys'])
      skip(name, `schema version ${version} is newer than this Springfield`);
    return false;
  }
  const mode = String(db.pragma('journal_mode', { simple: true })).toLowerCase();
  const journal: Finding[] =
    mode === 'wal'
      ? []
      : [
          command(
            'error',
            'journal_mode_not_wal',
            `journal mode is ${mode}, must be wal (concurrent agents need it)`,
            'springfield reconcile',
            'any write reopens the database in WAL mode',
          ),
        ];
  check('journal_mode', journal, 'wal', mode);
  const keys: Finding[] = [];
  if (intact) {
    const violations = foreignKeyViolations(db);
    const byTable = new Map<string, number>();
    for (const v of violations) byTable.set(v.table, (byTable.get(v.table) ?? 0) + 1);
    for (const [table, n] of byTable) {
      const message = `${n} row${n === 1 ? '' : 's'} in ${table} reference${n === 1 ? 's' : ''} a missing parent`;
      keys.push(
        PLAN_CHILD_TABLES.includes(table)
          ? command('error', 'foreign_key_violation', message, 'springfield prune')
          : {
              severity: 'error',
              code: 'foreign_key_violation',
              message,
              fix: `inspect with: sqlite3 ${shellQuote(input.dbPath)} 'PRAGMA foreign_key_check', then restore the missing parent rows`,
              command: null,
            },
      );
    }
  }
  check(
    'foreign_keys',
    keys,
    intact ? 'no violations' : 'skipped',
    `${keys.length} table${keys.length === 1 ? '' : 's'} with violations`,
  );
  return intact && version === SCHEMA_VERSION;
}

interface ClaimRow {
  plan_path: string;
  anchor: string;
  claimed_by: string | null;
  lease_expires_at: string | null;
}

function stateChecks(
  db: SqlConnection,
  input: DoctorInput,
  check: Check,
  skip: (name: string, detail: string) => void,
): void {
  const roots = planRoots(input.mainRoot, input.worktrees);
  if (roots.length === 0) skip('orphaned_plans', 'no worktree to look for plan files in');
  else {
    const orphans = findOrphanedPlans(db, roots);
    check(
      'orphaned_plans',
      orphans.map((p) => command('warning', 'orphaned_plan', `${p}: plan file is in no worktree`, 'springfield prune')),
      'every plan file exists',
      `${orphans.length} orphaned`,
    );
  }
  const claims = db
    .prepare(
      `SELECT plan_path, anchor, claimed_by, lease_expires_at FROM steps
    WHERE parent_anchor IS NULL AND status IN ('claimed', 'in_progress') ORDER BY plan_path, step_index`,
    )
    .all() as ClaimRow[];
  const reset = (c: ClaimRow) => `springfield reset ${shellQuote(c.plan_path)} ${shellQuote(c.anchor)}`;
  const now = input.now.toISOString();
  const expired = claims.filter((c) => c.lease_expires_at !== null && c.lease_expires_at < now);
  check(
    'expired_leases',
    expired.map((c) =>
      command(
        'warning',
        'lease_expired',
        `${c.plan_path} ${c.anchor}: lease of ${c.claimed_by ?? 'nobody'} expired at ${c.lease_expires_at}`,
        reset(c),
        `or 'springfield claim ${shellQuote(c.plan_path)}' reclaims it`,
      ),
    ),
    `${claims.length} live claim${claims.length === 1 ? '' : 's'}`,
    `${expired.length} expired`,
  );
  const registered = new Map(input.worktrees.map((w) => [w.path, w]));
  const gone = claims.filter(
    (c) => c.claimed_by !== null && (registered.get(c.claimed_by)?.missing ?? !existsSync(c.claimed_by)),
  );
  check(
    'missing_holders',
    gone.map((c) => {
      const stale = registered.get(c.claimed_by as string)?.missing === true;
      return command(
        'warning',
        'holder_worktree_missing',
        `${c.plan_path} ${c.anchor}: held by ${c.claimed_by}, which no longer exists`,
        stale ? `${reset(c)} && git worktree prune` : reset(c),
      );
    }),
    "every claim's worktree exists",
    `${gone.length} held by missing worktrees`,
  );
  planMdCheck(db, input, check, skip);
}

/** PLAN.md ids (`**springfield:** \`sf-a3f8\``) that name no epic, and epics PLAN.md never mentions. */
function planMdCheck(
  db: SqlConnection,
  input: DoctorInput,
  check: Check,
  skip: (name: string, detail: string) => void,
): void {
  const file = input.mainRoot ? join(input.mainRoot, 'PLAN.md') : null;
  if (!file || !existsSync(file)) {
    skip('plan_md', 'no PLAN.md in the main worktree');
    return;
  }
  const epics = new Set(db.prepare('SELECT id FROM epics ORDER BY id').pluck().all() as string[]);
  const mentioned = new Set<string>();
  const found: Finding[] = [];
  readFileSync(file, 'utf8')
    .split(/\r?\n/)
    .forEach((line, i) => {
      for (const m of line.matchAll(/\*\*springfield:\*\*\s*`([^`]*)`/g)) {
        const id = (m[1] as string).trim();
        mentioned.add(id);
        if (!epics.has(id)) {
          found.push({
            severity: 'warning',
            code: 'plan_md_unknown_epic',
            message: `PLAN.md:${i + 1}: ${id} names no epic`,
            fix: `edit PLAN.md line ${i + 1}: use an id from 'springfield epic list', or remove it`,
            command: null,
          });
        }
      }
    });
  for (const id of epics) {
    if (!mentioned.has(id)) {
      found.push({
        severity: 'warning',
        code: 'epic_not_in_plan_md',
        message: `epic ${id} is not mentioned in PLAN.md`,
        fix: `add the line "**springfield:** \`${id}\`" under the epic's section of PLAN.md`,
        command: null,
      });
    }
  }
  check(
    'plan_md',
    found,
    `${mentioned.size} id${mentioned.size === 1 ? '' : 's'}, ${epics.size} epic${epics.size === 1 ? '' : 's'}, all linked`,
    `${found.length} unlinked`,
  );
}
