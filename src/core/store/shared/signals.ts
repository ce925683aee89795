/** Review signals (docs/state-machine.md): Bart's typed findings, each applying its transition or waiting for a person to decide. */
import { DECISION_WORDS, decidedSignalType, type SignalDecision } from '../../epics/signals.ts';
import { signalEvent, transition, type SignalType } from '../../epics/transitions.ts';
import type { SignalLocation, SignalResult, SignalView, TransitionOutcome } from '../epicTypes.ts';
import type { Actor } from '../types.ts';
import { applyEpicEvent, requireEpic } from './epics.ts';
import { call, type Io, type Op } from './op.ts';
import type { StorePort } from './port.ts';
import * as refuse from './refusals.ts';

export interface SignalsPort {
  /** The new signal's id, its locations stored with it in order. */
  insertSignal(
    epicId: string,
    type: SignalType,
    summary: string,
    by: string,
    status: 'applied' | 'awaiting_person',
    locations: readonly SignalLocation[],
  ): Io<number>;
  /** The signal's row; with `lock`, PostgreSQL locks it (a signal is decided once). */
  signalRow(id: number, lock?: boolean): Io<{ epic_id: string; type: SignalType; status: string } | undefined>;
  /** A signal awaiting a person, decided. */
  closeSignal(id: number, by: string, resolution: string): Io<void>;
  /** Signals of one epic (or all), newest first, with their locations. */
  listSignals(epicId: string | undefined, limit: number): Io<SignalView[]>;
}

/**
 * Stores a typed review signal and applies its transition in the same transaction (both or
 * neither) — or, with `awaitPerson`, stores it for a person to decide and changes nothing else.
 */
export function* recordSignal(
  port: StorePort,
  epicId: string,
  type: SignalType,
  summary: string,
  locations: readonly SignalLocation[],
  actor: Actor,
  awaitPerson = false,
): Op<SignalResult> {
  if (summary.trim() === '') throw refuse.missingSummary();
  const epic = yield* requireEpic(port, epicId, true);
  if (awaitPerson) transition(epic.status, signalEvent(type));
  const outcome = awaitPerson
    ? null
    : yield* applyEpicEvent(port, epicId, signalEvent(type), actor, `${type}: ${summary.trim()}`);
  const id = yield* call(
    port.insertSignal(
      epicId,
      type,
      summary.trim(),
      actor.agent ?? actor.worktree,
      awaitPerson ? 'awaiting_person' : 'applied',
      locations,
    ),
  );
  yield* call(
    port.writeEvent(actor, {
      entity: 'signal',
      action: 'record',
      epicId,
      to: type,
      reason: summary.trim(),
      data: { signal_id: id, locations: locations.length, awaiting_person: awaitPerson },
    }),
  );
  return {
    recorded: true,
    signal_id: id,
    epic_id: epicId,
    type,
    locations: locations.length,
    awaiting_person: awaitPerson,
    transition: outcome,
  };
}

/**
 * A person's decision on a signal awaiting one: send back to Ralph (implementation failure),
 * escalate to Lisa (re-plan) or accept (pass). Applies the typed transition and closes the signal.
 */
export function* decideSignal(
  port: StorePort,
  signalId: number,
  decision: SignalDecision,
  actor: Actor,
  note: string | null = null,
): Op<TransitionOutcome> {
  const row = yield* call(port.signalRow(signalId, true));
  if (!row) throw refuse.unknownSignal(signalId);
  if (row.status !== 'awaiting_person') throw refuse.signalClosed(signalId, row.status);
  const type = decidedSignalType(decision, row.type);
  const words = DECISION_WORDS[decision];
  const outcome = yield* applyEpicEvent(
    port,
    row.epic_id,
    signalEvent(type),
    actor,
    `signal #${signalId} ${words}${note ? `: ${note}` : ''}`,
  );
  yield* call(port.closeSignal(signalId, actor.agent ?? actor.worktree, words));
  yield* call(
    port.writeEvent(actor, {
      entity: 'signal',
      action: 'decide',
      epicId: row.epic_id,
      from: 'awaiting_person',
      to: decision,
      reason: note,
      data: { signal_id: signalId },
    }),
  );
  return outcome;
}
