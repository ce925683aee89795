import { DECISION_WORDS, decidedSignalType, type SignalDecision } from '../../epics/signals.ts';
import { signalEvent, transition, type SignalType } from '../../epics/transitions.ts';
import { RefusedError, UsageError } from '../../errors.ts';
import type { SignalLocation, SignalResult, SignalView, TransitionOutcome } from '../epicTypes.ts';
import type { Actor } from '../types.ts';
import { applyEpicEvent, getEpic } from './interim.ts';
import { writeEvent } from './rows.ts';
import type { Database } from './sqlite.ts';

/**
 * Stores a typed review signal and applies its transition in the caller's transaction (both or
 * neither) — or, with `awaitPerson`, stores it for a person to decide and changes nothing else.
 */
export function recordSignal(db: Database, now: string, epicId: string, type: SignalType, summary: string, locations: readonly SignalLocation[], actor: Actor, awaitPerson = false): SignalResult {
  if (summary.trim() === '') throw new UsageError('missing_value', 'a signal needs --summary TEXT');
  const epic = getEpic(db, epicId);
  if (awaitPerson) transition(epic.status, signalEvent(type));
  const outcome = awaitPerson ? null : applyEpicEvent(db, now, epicId, signalEvent(type), actor, `${type}: ${summary.trim()}`);
  const id = Number(db.prepare('INSERT INTO signals (epic_id, type, summary, created_by, created_at, status) VALUES (?, ?, ?, ?, ?, ?)')
    .run(epicId, type, summary.trim(), actor.agent ?? actor.worktree, now, awaitPerson ? 'awaiting_person' : 'applied').lastInsertRowid);
  const loc = db.prepare('INSERT INTO signal_locations (signal_id, file, line, end_line, note) VALUES (?, ?, ?, ?, ?)');
  for (const l of locations) loc.run(id, l.file, l.line, l.endLine, l.note);
  writeEvent(db, now, actor, { entity: 'signal', action: 'record', epicId, to: type, reason: summary.trim(), data: { signal_id: id, locations: locations.length, awaiting_person: awaitPerson } });
  return { recorded: true, signal_id: id, epic_id: epicId, type, locations: locations.length, awaiting_person: awaitPerson, transition: outcome };
}

/**
 * A person's decision on a signal awaiting one: send back to Ralph (implementation failure),
 * escalate to Lisa (re-plan) or accept (pass). Applies the typed transition and closes the signal.
 */
export function decideSignal(db: Database, now: string, signalId: number, decision: SignalDecision, actor: Actor, note: string | null = null): TransitionOutcome {
  const row = db.prepare('SELECT * FROM signals WHERE id = ?').get(signalId) as { epic_id: string; type: SignalType; status: string; summary: string } | undefined;
  if (!row) throw new UsageError('unknown_signal', `no signal #${signalId} (see 'springfield signals')`);
  if (row.status !== 'awaiting_person') throw new RefusedError('signal_closed', `signal #${signalId} is ${row.status === 'applied' ? 'already applied' : 'already decided'}; nothing to decide`);
  const type = decidedSignalType(decision, row.type);
  const words = DECISION_WORDS[decision];
  const outcome = applyEpicEvent(db, now, row.epic_id, signalEvent(type), actor, `signal #${signalId} ${words}${note ? `: ${note}` : ''}`);
  db.prepare(`UPDATE signals SET status = 'decided', resolved_at = ?, resolved_by = ?, resolution = ? WHERE id = ? AND status = 'awaiting_person'`)
    .run(now, actor.agent ?? actor.worktree, words, signalId);
  writeEvent(db, now, actor, { entity: 'signal', action: 'decide', epicId: row.epic_id, from: 'awaiting_person', to: decision, reason: note, data: { signal_id: signalId } });
  return outcome;
}

/** Signals of one epic (or all), newest first, with their locations. */
export function listSignals(db: Database, epicId?: string, limit = 100): SignalView[] {
  const rows = (epicId
    ? db.prepare('SELECT * FROM signals WHERE epic_id = ? ORDER BY id DESC LIMIT ?').all(epicId, limit)
    : db.prepare('SELECT * FROM signals ORDER BY id DESC LIMIT ?').all(limit)) as Omit<SignalView, 'locations'>[];
  const locs = db.prepare('SELECT file, line, end_line, note FROM signal_locations WHERE signal_id = ? ORDER BY id');
  return rows.map((r) => ({ ...r, locations: locs.all(r.id) as SignalView['locations'] }));
}

