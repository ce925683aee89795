import { dirname, join } from 'node:path';
import { handoffFileName } from '../epics/handoff.ts';
import { parsePlan } from '../plan/parse.ts';
import { planSourceOf } from '../plan/source.ts';
import type { PlanSource } from '../plan/types.ts';
import { ensureOwnDirectory, replaceFile } from '../safeFiles.ts';
import type { Actor, ApproveResult, PlanVersionRow, Store } from '../store/index.ts';

export interface ApproveWithHandoff extends ApproveResult {
  /** Springfield's own copy of the handoff, to read (`.springfield/handoffs/`); the epic's branch gets it when the epic starts. */
  readonly handoff_path: string;
  readonly handoff_written: boolean;
}

/** The stored proposal as a plan source: what a person approves, from any worktree (docs/lifecycle.md). */
export function proposalSource(row: Pick<PlanVersionRow, 'plan_path' | 'body'>): PlanSource {
  return planSourceOf(row.plan_path, parsePlan(row.body, row.plan_path));
}

/** Where Springfield keeps its copy of an epic's handoff: beside the database, never in a working tree. */
export function handoffCopyPath(dbPath: string, epicId: string): string {
  return join(dirname(dbPath), 'handoffs', handoffFileName(epicId));
}

/**
 * Approval as people use it (CLI and editor alike): approve the stored proposal (or `source`, a file
 * that must match it), then keep a copy of the handoff beside the database. Nothing is written into
 * any worktree: the epic's branch gets the handoff when the scheduler starts it.
 */
export async function approveWithHandoff(
  store: Store,
  epicId: string,
  source: PlanSource | null,
  actor: Actor,
  dbPath: string,
  version?: number,
): Promise<ApproveWithHandoff> {
  const chosen = source ?? proposalSource(await store.pendingPlanVersion(epicId, version));
  const result = await store.approvePlan(epicId, chosen, actor, version);
  const text = await store.handoffText(epicId);
  const path = handoffCopyPath(dbPath, epicId);
  if (text === null) return { ...result, handoff_path: path, handoff_written: false };
  ensureOwnDirectory(dirname(path));
  replaceFile(path, text);
  return { ...result, handoff_path: path, handoff_written: true };
}
