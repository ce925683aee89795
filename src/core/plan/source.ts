import { resolve } from 'node:path';
import type { PlanSource } from '../store/types.ts';
import { readPlanFile } from './parse.ts';

/** Reads the plan keyed `planPath` from a worktree (each worktree has its own checkout of it). */
export function loadPlanSource(worktreeRoot: string, planPath: string): PlanSource {
  return { planPath, plan: readPlanFile(resolve(worktreeRoot, planPath), planPath) };
}
