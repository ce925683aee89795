import { resolve } from 'node:path';
import { parsePlanBytes, readPlanBytes } from './parse.ts';
import type { Plan, PlanSource } from './types.ts';

/** Reads the plan keyed `planPath` from a worktree (each worktree has its own checkout of it). */
export function loadPlanSource(worktreeRoot: string, planPath: string): PlanSource {
  const bytes = readPlanBytes(resolve(worktreeRoot, planPath), planPath);
  return { planPath, bytes, plan: parsePlanBytes(bytes, planPath) };
}

/**
 * The plan file read now and parsed only when `plan` is first used: a store holding these exact
 * bytes knows their structure without a parse (docs/cli-cost.md). Errors name `displayPath`.
 */
export function lazyPlanSource(absPath: string, planPath: string, displayPath: string): PlanSource {
  const bytes = readPlanBytes(absPath, displayPath);
  let parsed: Plan | undefined;
  return {
    planPath,
    bytes,
    get plan(): Plan {
      parsed ??= parsePlanBytes(bytes, displayPath);
      return parsed;
    },
  };
}
