/**
 * The public core API: what src/cli and src/extension use of src/core (docs/architecture.md), by name.
 * A name is exported here when something outside core imports it; tests may import core's files directly.
 * Nothing here names the store's backend; the folders behind it import each other only downward.
 */
export { contextDirFor, ensureContextDir } from './agents/contextDir.ts';
export { DEMO_AGENTS, demoRoles } from './agents/demoAgents.ts';
export { detectAgentClis } from './agents/detect.ts';
export { preflight } from './agents/preflight.ts';
export { AGENT_PRESETS, findPreset, PRESET_ROLES, type PresetRole } from './runs/presets.ts';
export { primeText, writePrimeSection } from './agents/prime.ts';
export {
  configuredVerification,
  presetFallbacks,
  presetRoles,
  presetUsage,
  writeConfigTemplate,
  writeRoleCommands,
} from './agents/roleConfig.ts';
export { fillPrompt, loadRolePrompt, promptNameFor, promptValues, withPrompt } from './agents/rolePrompt.ts';
export { buildBudget, type Complexity, COMPLEXITY_POLICY, parseComplexity } from './epics/complexity.ts';
export {
  type BudgetConfig,
  type EpicBudgetOverride,
  formatUsd,
  isCostBlockReason,
  pausedMessage,
  spendText,
} from './epics/costBudget.ts';
export { handoffFileName } from './epics/handoff.ts';
export { parsePriority } from './epics/ids.ts';
export { SIGNAL_DECISIONS, type SignalDecision } from './epics/signals.ts';
export {
  allowedEvents,
  isEpicStatus,
  isRetryable,
  isSignalType,
  SIGNAL_TYPES,
  transition,
} from './epics/transitions.ts';
export {
  type CodeOf,
  EnvironmentError,
  ERROR_CODES,
  type ErrorCategory,
  type ErrorCode,
  OutcomeUnknownError,
  RefusedError,
  SpringfieldError,
  UsageError,
} from './errors.ts';
export { commitStep } from './git/commit.ts';
export { gitOut } from './git/exec.ts';
export { ensureGitignored } from './git/gitignore.ts';
export { commitsBetween, readHead, refFromFiles } from './git/head.ts';
export { locateRepo, type RepoLocation } from './git/repo.ts';
export { hostId, repositoryId } from './git/repositoryId.ts';
export { resolveCommit } from './git/resolveCommit.ts';
export { readStepTrailers } from './git/trailers.ts';
export { listWorktrees } from './git/worktrees.ts';
export { claimedText, folderName, holderName, nothingClaimedText } from './names.ts';
export { type PendingOperation, pendingPath, readPending, removePending, writePending } from './pending.ts';
export { type LaunchedAgent, type Launcher, type LaunchSpec, ProcessLauncher } from './orchestrate/agentLauncher.ts';
export { assertBudgetRaised, budgetLine, type EpicBudgetView, epicBudgetView } from './orchestrate/budgetView.ts';
export { type ConflictAhead, conflictsAhead, defaultBranch, epicConflictsAhead } from './orchestrate/conflictsAhead.ts';
export { conflictRate, conflictRateLine, type ConflictRate } from './orchestrate/mergeConflicts.ts';
export { epicBranch } from './orchestrate/epicWorktree.ts';
export { UNDER_WAY } from './scheduler/filesRule.ts';
export { MESSAGES } from './scheduler/rules.ts';
export { startEpicInWorktree } from './orchestrate/epicStart.ts';
export { dryRun, epicHolds } from './orchestrate/dryRun.ts';
export { Orchestrator, type Waiting } from './orchestrate/orchestrator.ts';
export { retryLines, retryStatus, type RoleRetry } from './orchestrate/retryStatus.ts';
export { type SpringfieldWorktree, springfieldWorktrees } from './orchestrate/worktreeList.ts';
export { pruneWorktrees } from './orchestrate/worktreePrune.ts';
export { worktreeCommandEnv } from './orchestrate/worktreeEnv.ts';
export { worktreeFacts } from './orchestrate/worktreePorts.ts';
export { displayCommand } from './orchestrate/verify.ts';
export { appRunning, appUrl, forgetApp, recordApp, runningApp, stopApp } from './orchestrate/apps.ts';
export { describeDrift, type PlanStructure } from './plan/hash.ts';
export { firstBadUtf8Line, parsePlan } from './plan/parse.ts';
export { loadPlanSource, planFileSource } from './plan/source.ts';
export { planFileName, planTemplate } from './plan/template.ts';
export type { ItemKind, PlanSource } from './plan/types.ts';
export { isEditorVariable } from './runs/agentEnv.ts';
export { type GroupEnd, type OutputSink, OutputTail, type RunningGroup, startGroup } from './runs/processGroup.ts';
export {
  AGENT_ROLES,
  type AgentRole,
  configPathFor,
  DEFAULT_RUN_CONFIG,
  loadRoleCommands,
  parseRunConfig,
  type RunConfig,
  timeoutFor,
} from './runs/runConfig.ts';
export { detectTestCommand } from './runs/testCommand.ts';
export { createExclusively, ensureOwnDirectory, replaceFile, writeExclusive } from './safeFiles.ts';
export type { Action } from './scheduler/types.ts';
export type { Unstaffed } from './scheduler/unstaffed.ts';
export { fileAtCommit } from './git/branchDiff.ts';
export { epicChanges } from './review/epicChanges.ts';
export { PERSON_REVIEWER, type ReviewComment, type ReviewResult, submitReview } from './review/personReview.ts';
export { shellQuote } from './shellQuote.ts';
export {
  allowConfig,
  allowWrittenConfig,
  requireAllowed,
  revokeConfig,
  trackedPath,
  trustStatus,
  type TrustStatus,
  trustTargetFor,
} from './trust/trust.ts';
export { approveWithHandoff, handoffCopyPath } from './workflows/approve.ts';
export { diagnose, diagnoseRemote } from './workflows/doctor.ts';
export {
  type Actor,
  type AgentRunStart,
  type CheckResult,
  claimPlace,
  type ClaimResult,
  type ContextView,
  type EpicRow,
  type EventView,
  isDatabaseUrl,
  ITEM_STATUSES,
  type ItemChange,
  type ItemStatus,
  type MigrateResult,
  migrateToPostgres,
  migrateToSqlite,
  openStepStore,
  openStore,
  type Planner,
  PLANNERS,
  planRoots,
  type PlanVersionRow,
  type PlanView,
  redactDatabaseUrl,
  type RunView,
  type SignalLocation,
  type SignalView,
  type StepStore,
  type StepView,
  type Store,
  type StoreSettings,
  type UpdateResult,
} from './store/index.ts';
export { runAgent } from './supervisor/supervisor.ts';
export { clearLimit, clock, limitedUntil, limitOf, presetLimits, recordLimit } from './limits/hostLimits.ts';
export { limitHolds } from './limits/runLimit.ts';
export { type RoleLimit, roleLimits } from './orchestrate/presetChoice.ts';
