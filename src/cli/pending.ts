import {
  hostId,
  isDatabaseUrl,
  OutcomeUnknownError,
  pendingPath,
  readPending,
  removePending,
  writePending,
  type PendingOperation,
  type StepStore,
} from '../core/index.ts';
import type { CliContext } from './cliContext.ts';
import { messageOf } from '../shared/errorMessage.ts';

/** What a handed-over operation was for, besides its command and holder: its plan, its epic (either may be none). */
export interface HandOverScope {
  readonly plan?: string | null;
  readonly epic?: string | null;
}

/**
 * Runs a write that is not idempotent (`claim`, `artifact`, `signal`, `epic create`, `plan propose`)
 * with the hand-over of a lost reply (docs/postgres-design.md, "Failures, retries, idempotence", "Retrying from a new process"). On
 * PostgreSQL only: SQLite has no lost replies, and on it the file is neither read nor written.
 *
 * Before: `<worktree's git dir>/springfield/pending.json`, if it names this command, plan, epic and
 * holder, gives `send` the earlier operation's id to look up first. Another holder's, another
 * command's or an unusable file is ignored with a warning. After: the file is removed once the lookup
 * settled it; a new write whose outcome is unknown records its own id (created exclusively, 0600, never
 * through a link); a lookup that could not reach the server keeps the file.
 */
export async function withHandOver<T>(
  ctx: CliContext<StepStore>,
  command: string,
  scope: HandOverScope,
  send: (resume: string | undefined) => Promise<T>,
): Promise<T> {
  if (!isDatabaseUrl(ctx.dbPath)) return send(undefined);
  const path = pendingPath(ctx.location.gitDir);
  const actor = ctx.actor;
  const holder = { host: hostId(ctx.env), worktree: actor.worktree, agent: actor.agent };
  const planPath = scope.plan ?? null;
  const epicId = scope.epic ?? null;
  const found = readPending(path);
  let resume: string | undefined;
  if (found.state === 'unusable') ctx.warnings.push(`ignoring ${path}: ${found.why}`);
  if (found.state === 'found') {
    const p = found.pending;
    const same =
      p.command === command &&
      p.plan_path === planPath &&
      p.epic_id === epicId &&
      p.holder.host === holder.host &&
      p.holder.worktree === holder.worktree &&
      p.holder.agent === holder.agent;
    if (same) resume = p.op;
    else
      ctx.warnings.push(
        `ignoring ${path}: it is for '${[p.command, p.epic_id, p.plan_path].filter(Boolean).join(' ')}' by ${p.holder.host}:${p.holder.worktree} (${p.holder.agent ?? 'no agent'}), not this command and holder`,
      );
  }
  try {
    const result = await send(resume);
    if (resume) removePending(path, resume);
    return result;
  } catch (err) {
    // The earlier operation could not be looked up: the file stays for the next run.
    if (resume && err instanceof OutcomeUnknownError && err.op === resume) throw err;
    if (resume) removePending(path, resume);
    if (!(err instanceof OutcomeUnknownError)) throw err;
    const pending: PendingOperation = {
      v: 1,
      op: err.op,
      command,
      plan_path: planPath,
      epic_id: epicId,
      holder,
      at: new Date().toISOString(),
    };
    try {
      writePending(path, pending);
    } catch (failed) {
      throw new OutcomeUnknownError(
        err.op,
        `${err.message}; its operation id ${err.op} could not be handed over (${messageOf(failed)}), so running it again may ${command === 'claim' ? 'claim a second step' : 'do it twice'}`,
      );
    }
    throw new OutcomeUnknownError(err.op, `${err.message} (operation ${err.op}, kept in ${path})`);
  }
}

/** The plain line's note on a result an earlier run's lost operation made, handed over (empty otherwise). */
export function byEarlierRun(r: { readonly resumed?: true }): string {
  return r.resumed ? ' (by an earlier run whose reply was lost)' : '';
}
