import { UsageError } from '../errors.ts';
import { writeEvent } from '../store/rows.ts';
import type { Database } from '../store/sqlite.ts';
import type { Actor } from '../store/types.ts';
import { applyEpicEvent, getEpic, type TransitionOutcome } from './epicStore.ts';
import { signalEvent, type SignalType } from './transitions.ts';

export interface SignalLocation {
  /** Repository-relative path with forward slashes. */
  readonly file: string;
  readonly line: number;
  readonly endLine: number | null;
  readonly note: string | null;
}

export interface SignalView {
  readonly id: number;
  readonly epic_id: string;
  readonly type: SignalType;
  readonly summary: string;
  readonly created_by: string | null;
  readonly created_at: string;
  readonly resolved_at: string | null;
  readonly resolution: string | null;
  readonly locations: readonly { file: string; line: number; end_line: number | null; note: string | null }[];
}

export interface SignalResult {
  readonly recorded: true;
  readonly signal_id: number;
  readonly epic_id: string;
  readonly type: SignalType;
  readonly locations: number;
  readonly transition: TransitionOutcome;
}

/** Stores a typed review signal and applies its transition in the caller's transaction: both or neither. */
export function recordSignal(db: Database, now: string, epicId: string, type: SignalType, summary: string, locations: readonly SignalLocation[], actor: Actor): SignalResult {
  if (summary.trim() === '') throw new UsageError('missing_value', 'a signal needs --summary TEXT');
  getEpic(db, epicId);
  const outcome = applyEpicEvent(db, now, epicId, signalEvent(type), actor, `${type}: ${summary.trim()}`);
  const id = Number(db.prepare('INSERT INTO signals (epic_id, type, summary, created_by, created_at) VALUES (?, ?, ?, ?, ?)')
    .run(epicId, type, summary.trim(), actor.agent ?? actor.worktree, now).lastInsertRowid);
  const loc = db.prepare('INSERT INTO signal_locations (signal_id, file, line, end_line, note) VALUES (?, ?, ?, ?, ?)');
  for (const l of locations) loc.run(id, l.file, l.line, l.endLine, l.note);
  writeEvent(db, now, actor, { entity: 'signal', action: 'record', epicId, to: type, reason: summary.trim(), data: { signal_id: id, locations: locations.length } });
  return { recorded: true, signal_id: id, epic_id: epicId, type, locations: locations.length, transition: outcome };
}

/** Signals of one epic (or all), newest first, with their locations. */
export function listSignals(db: Database, epicId?: string, limit = 100): SignalView[] {
  const rows = (epicId
    ? db.prepare('SELECT * FROM signals WHERE epic_id = ? ORDER BY id DESC LIMIT ?').all(epicId, limit)
    : db.prepare('SELECT * FROM signals ORDER BY id DESC LIMIT ?').all(limit)) as Omit<SignalView, 'locations'>[];
  const locs = db.prepare('SELECT file, line, end_line, note FROM signal_locations WHERE signal_id = ? ORDER BY id');
  return rows.map((r) => ({ ...r, locations: locs.all(r.id) as SignalView['locations'] }));
}

/** Marks a signal handled by a person (e.g. acted on from the editor), with what was done. */
export function resolveSignal(db: Database, now: string, signalId: number, resolution: string, actor: Actor): void {
  const changed = db.prepare('UPDATE signals SET resolved_at = ?, resolution = ? WHERE id = ? AND resolved_at IS NULL').run(now, resolution, signalId).changes;
  if (changed !== 1) throw new UsageError('unknown_signal', `no open signal #${signalId}`);
  const epicId = db.prepare('SELECT epic_id FROM signals WHERE id = ?').pluck().get(signalId) as string;
  writeEvent(db, now, actor, { entity: 'signal', action: 'resolve', epicId, reason: resolution, data: { signal_id: signalId } });
}
