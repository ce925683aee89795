/** A person's decisions on a review signal that awaits one. Pure: the store applies them. */
import type { SignalType } from './transitions.ts';

export type SignalDecision = 'send_back' | 'escalate' | 'accept';
export const SIGNAL_DECISIONS: readonly SignalDecision[] = ['send_back', 'escalate', 'accept'];

/**
 * The signal type a decision applies: accept is a pass, send back an implementation failure,
 * escalate re-plans (an invalidated ADR stays one).
 */
export function decidedSignalType(decision: SignalDecision, recorded: SignalType): SignalType {
  if (decision === 'accept') return 'pass';
  if (decision === 'send_back') return 'implementation_failure';
  return recorded === 'adr_invalidated' ? 'adr_invalidated' : 'option_viability_failure';
}

/** How a decision reads in the event log and on the signal. */
export const DECISION_WORDS: Readonly<Record<SignalDecision, string>> = {
  send_back: 'sent back to Ralph',
  escalate: 'escalated to Lisa',
  accept: 'accepted',
};
