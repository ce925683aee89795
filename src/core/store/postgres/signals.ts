import { DECISION_WORDS, decidedSignalType, type SignalDecision } from '../../epics/signals.ts';
import { signalEvent, transition, type SignalType } from '../../epics/transitions.ts';
import { RefusedError, UsageError } from '../../errors.ts';
import type { SignalLocation, SignalResult, SignalView, TransitionOutcome } from '../epicTypes.ts';
import type { Actor } from '../types.ts';
import { applyEpicEvent, getEpic } from './epics.ts';
import { opEvent, writeEvent } from './rows.ts';
import type { Tx } from './session.ts';

/**
 * Stores a typed review signal and applies its transition in the same transaction (both or neither) —
 * or, with `awaitPerson`, stores it for a person to decide and changes nothing else. As on SQLite.
 */
export async function recordSignal(tx: Tx, epicId: string, type: SignalType, summary: string, locations: readonly SignalLocation[], actor: Actor, awaitPerson = false): Promise<SignalResult> {
  if (summary.trim() === '') throw new UsageError('missing_value', 'a signal needs --summary TEXT');
  const epic = await getEpic(tx, epicId, true);
  if (awaitPerson) transition(epic.status, signalEvent(type));
  const outcome = awaitPerson ? null : await applyEpicEvent(tx, epicId, signalEvent(type), actor, `${type}: ${summary.trim()}`);
  const id = Number((await tx.q<{ id: number }>(`INSERT INTO signals (repo_id, epic_id, type, summary, created_by, created_at, status) VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id`,
    [tx.repo, epicId, type, summary.trim(), actor.agent ?? actor.worktree, tx.now, awaitPerson ? 'awaiting_person' : 'applied']))[0]?.id);
  if (locations.length > 0) {
    await tx.q(`INSERT INTO signal_locations (signal_id, file, line, end_line, note)
      SELECT $1, l.file, l.line, l.end_line, l.note FROM unnest($2::text[], $3::int[], $4::int[], $5::text[]) WITH ORDINALITY AS l(file, line, end_line, note, n) ORDER BY l.n`,
    [id, locations.map((l) => l.file), locations.map((l) => l.line), locations.map((l) => l.endLine), locations.map((l) => l.note)]);
  }
  await writeEvent(tx, actor, { entity: 'signal', action: 'record', epicId, to: type, reason: summary.trim(), data: { signal_id: id, locations: locations.length, awaiting_person: awaitPerson } });
  return { recorded: true, signal_id: id, epic_id: epicId, type, locations: locations.length, awaiting_person: awaitPerson, transition: outcome };
}

/**
 * The signal operation `op` recorded on `epicId` for this holder — the same type, summary and whether
 * it awaits a person — with the transition it applied, rebuilt from its events; null when it committed
 * none (its reply was lost: docs/postgres.md, "Failures, retries, idempotence"). A different signal is not this one.
 */
export async function findSignal(tx: Tx, op: string, epicId: string, type: SignalType, summary: string, actor: Actor, awaitPerson: boolean): Promise<SignalResult | null> {
  const row = await opEvent(tx, op, actor, 'signal', 'record', { epic_id: epicId, to_status: type, reason: summary.trim(), "data->>'awaiting_person'": String(awaitPerson) });
  if (!row) return null;
  const moved = awaitPerson ? undefined : await opEvent(tx, op, actor, 'epic', signalEvent(type), { epic_id: epicId });
  const transition: TransitionOutcome | null = moved
    ? {
        epic_id: epicId, event: signalEvent(type), from: moved.from_status as TransitionOutcome['from'], to: moved.to_status as TransitionOutcome['to'],
        next_role: (moved.data.next_role ?? null) as TransitionOutcome['next_role'], iteration: Number(moved.data.iteration), reason: moved.reason,
      }
    : null;
  return { recorded: true, signal_id: Number(row.data.signal_id), epic_id: epicId, type, locations: Number(row.data.locations), awaiting_person: awaitPerson, transition };
}

/**
 * A person's decision on a signal awaiting one: send back to Ralph, escalate to Lisa or accept.
 * Applies the typed transition and closes the signal; the signal's row is locked, so it is decided once.
 */
export async function decideSignal(tx: Tx, signalId: number, decision: SignalDecision, actor: Actor, note: string | null = null): Promise<TransitionOutcome> {
  const row = (await tx.q<{ epic_id: string; type: SignalType; status: string }>('SELECT epic_id, type, status FROM signals WHERE repo_id = $1 AND id = $2 FOR UPDATE',
    [tx.repo, signalId]))[0];
  if (!row) throw new UsageError('unknown_signal', `no signal #${signalId} (see 'springfield signals')`);
  if (row.status !== 'awaiting_person') throw new RefusedError('signal_closed', `signal #${signalId} is ${row.status === 'applied' ? 'already applied' : 'already decided'}; nothing to decide`);
  const type = decidedSignalType(decision, row.type);
  const words = DECISION_WORDS[decision];
  const outcome = await applyEpicEvent(tx, row.epic_id, signalEvent(type), actor, `signal #${signalId} ${words}${note ? `: ${note}` : ''}`);
  await tx.q(`UPDATE signals SET status = 'decided', resolved_at = $3, resolved_by = $4, resolution = $5 WHERE repo_id = $1 AND id = $2 AND status = 'awaiting_person'`,
    [tx.repo, signalId, tx.now, actor.agent ?? actor.worktree, words]);
  await writeEvent(tx, actor, { entity: 'signal', action: 'decide', epicId: row.epic_id, from: 'awaiting_person', to: decision, reason: note, data: { signal_id: signalId } });
  return outcome;
}

/** Signals of one epic (or all), newest first, with their locations: two queries. */
export async function listSignals(tx: Tx, epicId?: string, limit = 100): Promise<SignalView[]> {
  const rows = await tx.q<Omit<SignalView, 'locations'>>(`SELECT id, epic_id, type, summary, created_by, created_at, status, resolved_at, resolved_by, resolution
    FROM signals WHERE repo_id = $1 ${epicId ? 'AND epic_id = $3' : ''} ORDER BY id DESC LIMIT $2`, epicId ? [tx.repo, limit, epicId] : [tx.repo, limit]);
  if (rows.length === 0) return [];
  const locs = await tx.q<SignalView['locations'][number] & { signal_id: number }>(`SELECT signal_id, file, line, end_line, note FROM signal_locations
    WHERE signal_id = ANY($1::bigint[]) ORDER BY id`, [rows.map((r) => r.id)]);
  return rows.map((r) => ({ ...r, locations: locs.filter((l) => l.signal_id === r.id).map(({ signal_id: _s, ...l }) => l) }));
}
