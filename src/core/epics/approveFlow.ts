import type { Actor, PlanSource, StateStore } from '../store/types.ts';
import { writeHandoffOnce } from './handoff.ts';
import type { ApproveResult } from './planApproval.ts';

export interface ApproveWithHandoff extends ApproveResult {
  readonly handoff_path: string;
  readonly handoff_written: boolean;
}

/** Approval as people use it (CLI and editor alike): approve in the store, then write the handoff once. */
export async function approveWithHandoff(store: StateStore, epicId: string, source: PlanSource, actor: Actor, docsRoot: string, version?: number): Promise<ApproveWithHandoff> {
  const result = await store.approvePlan(epicId, source, actor, version);
  const epic = await store.getEpic(epicId);
  const handoff = writeHandoffOnce(docsRoot, epic, source.plan, source.planPath);
  return { ...result, handoff_path: handoff.path, handoff_written: handoff.written };
}
