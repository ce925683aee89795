import { signalEvent, type SignalType } from '../../epics/transitions.ts';
import type { SignalResult, SignalView, TransitionOutcome } from '../epicTypes.ts';
import type { SignalsPort } from '../shared/signals.ts';
import type { Actor } from '../types.ts';
import type { PgMethods } from './port.ts';
import { opEvent } from './rows.ts';
import type { Tx } from './session.ts';

/** Review signals and their locations (shared/signals.ts); a signal is locked while it is decided. */
export const signalsPg: PgMethods<SignalsPort> = {
  async insertSignal(epicId, type, summary, by, status, locations) {
    const id = Number(
      (
        await this.tx.q<{ id: number }>(
          `INSERT INTO signals (repo_id, epic_id, type, summary, created_by, created_at, status) VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id`,
          [this.tx.repo, epicId, type, summary, by, this.now, status],
        )
      )[0]?.id,
    );
    if (locations.length > 0) {
      await this.tx.q(
        `INSERT INTO signal_locations (signal_id, file, line, end_line, note)
        SELECT $1, l.file, l.line, l.end_line, l.note FROM unnest($2::text[], $3::int[], $4::int[], $5::text[]) WITH ORDINALITY AS l(file, line, end_line, note, n) ORDER BY l.n`,
        [
          id,
          locations.map((l) => l.file),
          locations.map((l) => l.line),
          locations.map((l) => l.endLine),
          locations.map((l) => l.note),
        ],
      );
    }
    return id;
  },
  async signalRow(id, lock = false) {
    return (
      await this.tx.q<{ epic_id: string; type: SignalType; status: string }>(
        `SELECT epic_id, type, status FROM signals WHERE repo_id = $1 AND id = $2${lock ? ' FOR UPDATE' : ''}`,
        [this.tx.repo, id],
      )
    )[0];
  },
  async closeSignal(id, by, resolution) {
    await this.tx.q(
      `UPDATE signals SET status = 'decided', resolved_at = $3, resolved_by = $4, resolution = $5 WHERE repo_id = $1 AND id = $2 AND status = 'awaiting_person'`,
      [this.tx.repo, id, this.now, by, resolution],
    );
  },
  async listSignals(epicId, limit) {
    // Two queries: the signals, then all their locations.
    const rows = await this.tx.q<Omit<SignalView, 'locations'>>(
      `SELECT id, epic_id, type, summary, created_by, created_at, status, resolved_at, resolved_by, resolution
      FROM signals WHERE repo_id = $1 ${epicId ? 'AND epic_id = $3' : ''} ORDER BY id DESC LIMIT $2`,
      epicId ? [this.tx.repo, limit, epicId] : [this.tx.repo, limit],
    );
    if (rows.length === 0) return [];
    const locs = await this.tx.q<SignalView['locations'][number] & { signal_id: number }>(
      `SELECT signal_id, file, line, end_line, note FROM signal_locations
      WHERE signal_id = ANY($1::bigint[]) ORDER BY id`,
      [rows.map((r) => r.id)],
    );
    return rows.map((r) => ({
      ...r,
      locations: locs.filter((l) => l.signal_id === r.id).map(({ signal_id: _s, ...l }) => l),
    }));
  },
};

/**
 * The signal operation `op` recorded on `epicId` for this holder — the same type, summary and whether
 * it awaits a person — with the transition it applied, rebuilt from its events; null when it committed
 * none (its reply was lost: docs/postgres-design.md, "Failures, retries, idempotence"). A different signal is not this one.
 */
export async function findSignal(
  tx: Tx,
  op: string,
  epicId: string,
  type: SignalType,
  summary: string,
  actor: Actor,
  awaitPerson: boolean,
): Promise<SignalResult | null> {
  const row = await opEvent(tx, op, actor, 'signal', 'record', {
    epic_id: epicId,
    to_status: type,
    reason: summary.trim(),
    "data->>'awaiting_person'": String(awaitPerson),
  });
  if (!row) return null;
  const moved = awaitPerson ? undefined : await opEvent(tx, op, actor, 'epic', signalEvent(type), { epic_id: epicId });
  const transition: TransitionOutcome | null = moved
    ? {
        epic_id: epicId,
        event: signalEvent(type),
        from: moved.from_status as TransitionOutcome['from'],
        to: moved.to_status as TransitionOutcome['to'],
        next_role: (moved.data.next_role ?? null) as TransitionOutcome['next_role'],
        iteration: Number(moved.data.iteration),
        reason: moved.reason,
      }
    : null;
  return {
    recorded: true,
    signal_id: Number(row.data.signal_id),
    epic_id: epicId,
    type,
    locations: Number(row.data.locations),
    awaiting_person: awaitPerson,
    transition,
  };
}
