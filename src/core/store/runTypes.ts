import { type AgentRole, SETUP_ROLE } from '../../shared/roles.ts';
import type { Actor } from './types.ts';

export interface RunView {
  readonly id: number;
  readonly epic_id: string | null;
  readonly plan_path: string | null;
  readonly step_anchor: string | null;
  readonly role: string;
  readonly iteration: number;
  readonly worktree: string | null;
  readonly agent_id: string | null;
  readonly command: string;
  readonly pid: number | null;
  readonly status: string;
  readonly started_at: string;
  readonly ended_at: string | null;
  readonly exit_code: number | null;
  /** Why the run ended as it did (null for a plain success). */
  readonly outcome_reason: string | null;
  /** The last lines of the agent's output. */
  readonly output_tail: string;
  readonly head_before: string | null;
  readonly head_after: string | null;
  /** The agent's process group leader (the supervisor is `pid`). */
  readonly agent_pid: number | null;
  readonly claim_token: number | null;
  readonly launch_id: string | null;
  /** Usage the agent reported in its output (docs/lifecycle.md); null when not configured or not reported. */
  readonly cost_usd?: number | null;
  readonly input_tokens?: number | null;
  readonly output_tokens?: number | null;
  readonly cache_read_tokens?: number | null;
  readonly cache_write_tokens?: number | null;
  readonly premium_requests?: number | null;
}

/** What an agent reported it used (read from its output by the role's usage reader). */
export interface RunUsage {
  readonly costUsd: number | null;
  readonly inputTokens: number | null;
  readonly outputTokens: number | null;
  readonly cacheReadTokens: number | null;
  readonly cacheWriteTokens: number | null;
  readonly premiumRequests: number | null;
}

/** Tokens and cost of one epic's runs of one role (only runs that reported usage count). */
export interface UsageByRole {
  readonly epic_id: string;
  readonly role: string;
  readonly runs: number;
  readonly cost_usd: number | null;
  readonly input_tokens: number | null;
  readonly output_tokens: number | null;
}

/** One epic's spend, as the store adds it up from its ended agent runs (docs/budgets.md). */
export interface EpicSpend {
  readonly epic_id: string;
  /** Cost the runs reported. */
  readonly usd: number;
  /** Tokens the runs reported, in + out. */
  readonly tokens: number;
  /** Wall-time minutes of the runs that reported no cost. */
  readonly minutes: number;
  /** Its ended agent runs (sessions), counted or not. */
  readonly runs: number;
}

/** What agents spent: per epic, and today (UTC, by the store's clock) over every epic. */
export interface SpendReport {
  readonly epics: readonly EpicSpend[];
  readonly today: { readonly day: string; readonly usd: number };
}

/**
 * A run's status is its outcome once it ends (docs/scheduler-faults.md): `stopped` when a person
 * stopped it (no fault, no iteration), `stalled` when it went silent without progress, `unavailable`
 * when its agent could not run at all (not installed, not logged in), `limited` when its CLI met a usage or
 * rate limit (no fault, no iteration: docs/agents.md, "Usage limits").
 */
export type RunStatus =
  | 'running'
  | 'succeeded'
  | 'failed'
  | 'timed_out'
  | 'lost'
  | 'no_progress'
  | 'stopped'
  | 'stalled'
  | 'unavailable'
  | 'limited';

/** The outcomes that count as a non-success (the retry limit and the budget count them). */
export const FAILED_STATUSES: readonly RunStatus[] = [
  'failed',
  'timed_out',
  'lost',
  'no_progress',
  'stalled',
  'unavailable',
];

/** The scheduler's own work recorded like an agent run (the role registry's; shown in the Agents view, never a session). */
export { SETUP_ROLE };

export interface NewRun {
  readonly epicId: string;
  readonly planPath: string | null;
  readonly stepAnchor: string | null;
  readonly role: AgentRole | typeof SETUP_ROLE;
  readonly iteration: number;
  readonly worktree: string;
  readonly agentId: string | null;
  /** The agent's argument vector, stored as a JSON array (never shell text). */
  readonly command: readonly string[];
  /** The supervising process (the one that heartbeats and finishes the row): if it dies, the run is lost. */
  readonly pid: number;
  /** The claim token the run holds on its step, which releasing it is fenced by. */
  readonly claimToken?: number | null;
  /** The worktree's commit when the run started. */
  readonly headBefore?: string | null;
  /** The scheduler's id for the launch that started this run. */
  readonly launchId?: string | null;
}

/** How a run ended, as its supervisor saw it. */
export interface RunEnd {
  readonly exitCode: number;
  /** The signal that ended the agent, if one did. */
  readonly signal: string | null;
  readonly timedOut?: boolean;
  /** The last lines of the agent's output. */
  readonly outputTail?: string;
  /** The worktree's commit when the agent ended. */
  readonly headAfter?: string | null;
  /** Makes the run failed whatever its exit code (it left the epic's branch, could not start, …). */
  readonly fault?: string | null;
  /** Who stopped it (a person, the scheduler being stopped): the run is `stopped`, counts no fault and no iteration. */
  readonly stopped?: string | null;
  /** Why it was ended as stalled: no output and no progress for the stall time. */
  readonly stalled?: string | null;
  /** The usage or rate limit its CLI met, in its words with when it resets: `limited`, no fault and no iteration. */
  readonly limited?: string | null;
  /** Why its agent could not run at all (command not found): `unavailable`. */
  readonly unavailable?: string | null;
  /** The agent's own error, where its output reports one: the reason of a failed run says it. */
  readonly agentError?: string | null;
  /** The run's step was completed by a commit that is not on the epic's branch: reopen it. */
  readonly reopenStep?: boolean;
  /** Counters taken when the run started, to tell progress from none. */
  readonly marks?: ProgressMarks | null;
  /** The timeout that ended it, in seconds, for the reason text. */
  readonly timeoutSeconds?: number;
  /** What the agent reported it used, stored on the run with its outcome (docs/lifecycle.md). */
  readonly usage?: RunUsage | null;
}

/** What an agent could have changed in the store: plan proposals, signals, ticked items of its step. */
export interface ProgressMarks {
  readonly proposals: number;
  readonly signals: number;
  readonly itemsDone: number;
}

export type SessionCounts = Record<AgentRole | 'total', number>;

export interface VerificationView {
  readonly id: number;
  /** The builder run the verification followed. */
  readonly run_id: number | null;
  readonly epic_id: string | null;
  readonly step_anchor: string | null;
  readonly command: string;
  readonly exit_code: number | null;
  readonly verdict: string;
  readonly duration_ms: number;
  readonly output_tail: string;
  readonly created_at: string;
}

/** What `springfield run` asks for: the run of a role on an epic (and the step this worktree holds). */
export interface AgentRunInput {
  readonly role: AgentRole;
  readonly epicId: string;
  /** The plan named on the command line, else the epic's. */
  readonly planArg: string | undefined;
  readonly stepAnchor: string | null;
  readonly command: readonly string[];
  readonly actor: Actor;
  readonly leaseSeconds: number;
  readonly headBefore: string | null;
  readonly launchId: string | null;
  /** The supervising process. */
  readonly pid: number;
}

/** A run recorded as begun, with what its supervisor needs until it ends. */
export interface AgentRunStart {
  readonly run: RunView;
  readonly planPath: string | null;
  readonly stepAnchor: string | null;
  /** The holder's identity with the claim's current token: what heartbeats are fenced by. */
  readonly holder: Actor;
  readonly agent: string;
  readonly marks: ProgressMarks;
  /** The run works in the epic's own worktree (the scheduler's), not a person's: its branch must not change. */
  readonly ownWorktree: boolean;
}

/** One command of a verification pass, as it ended. */
export interface VerificationEntry {
  readonly runId: number | null;
  readonly epicId: string | null;
  readonly planPath: string | null;
  readonly stepAnchor: string | null;
  readonly command: string;
  readonly exitCode: number | null;
  readonly verdict: 'pass' | 'fail';
  readonly durationMs: number;
  readonly outputTail: string;
}
