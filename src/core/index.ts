/**
 * The public core API: what src/cli and src/extension use of src/core (docs/architecture.md).
 * Nothing here names the store's backend; the folders behind it import each other only downward.
 */
export * from './agents/contextDir.ts';
export * from './agents/detect.ts';
export * from './agents/preflight.ts';
export * from './runs/presets.ts';
export * from './agents/prime.ts';
export * from './agents/roleConfig.ts';
export * from './agents/rolePrompt.ts';
export * from './agents/toolSchemas.ts';
export * from './agents/tools.ts';
export * from './runs/usage.ts';
export * from './epics/budget.ts';
export * from './epics/completion.ts';
export * from './epics/complexity.ts';
export * from './epics/handoff.ts';
export * from './epics/ids.ts';
export * from './epics/signals.ts';
export * from './epics/transitions.ts';
export * from './errors.ts';
export * from './git/commit.ts';
export * from './git/exec.ts';
export * from './git/gitignore.ts';
export * from './git/head.ts';
export * from './git/repo.ts';
export * from './git/repositoryId.ts';
export * from './git/resolveCommit.ts';
export * from './git/trailers.ts';
export * from './git/worktrees.ts';
export * from './names.ts';
export * from './pending.ts';
export * from './orchestrate/agentLauncher.ts';
export * from './orchestrate/dryRun.ts';
export * from './orchestrate/orchestrator.ts';
export * from './orchestrate/retryStatus.ts';
export * from './plan/hash.ts';
export * from './plan/parse.ts';
export * from './plan/source.ts';
export * from './plan/template.ts';
export * from './plan/types.ts';
export * from './runs/agentArgv.ts';
export * from './runs/agentErrors.ts';

export * from './runs/agentEnv.ts';
export * from './runs/processGroup.ts';
export * from './runs/cliShim.ts';
export * from './runs/runConfig.ts';
export * from './safeFiles.ts';
export * from './scheduler/types.ts';
export * from './scheduler/unstaffed.ts';
export * from './shellQuote.ts';
export * from './trust/trust.ts';
export * from './workflows/approve.ts';
export * from './workflows/doctor.ts';
export * from './store/index.ts';
