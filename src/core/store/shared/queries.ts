/** What the read commands show: which steps are ready, plans and steps with their items, the audit log. */
import type { ReadyResult } from '../types.ts';
import { epicWait } from './claims.ts';
import { call, type Op } from './op.ts';
import type { StorePort } from './port.ts';
import { requirePlan } from './rows.ts';

/**
 * Which steps are ready, claimed, expired, blocked and completed. It agrees with claim: while the
 * plan's epic is not in progress, steps that would be ready are `waiting_steps`, with the reason,
 * the same words claim refuses with.
 */
export function* readySteps(port: StorePort, plan: string): Op<ReadyResult> {
  const row = yield* requirePlan(port, plan);
  const p = yield* call(port.partitionSteps(plan));
  const epic = epicWait(row, row.epic_id ? (yield* call(port.claimedEpic(row.epic_id)))?.status ?? null : null);
  const waiting = epic.message !== null;
  return {
    plan_path: plan, ready_steps: waiting ? [] : p.ready, waiting_steps: waiting ? p.ready : [], waiting_reason: epic.message,
    epic_id: row.epic_id, epic_status: epic.status,
    all_steps: p.all, completed_steps: p.completed, claimed_steps: p.claimed, blocked_steps: p.blocked, expired_claims: p.expired,
  };
}
