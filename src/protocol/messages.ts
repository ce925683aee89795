import { z } from 'zod';
import { EPIC_ID_PATTERN } from '../shared/epicId.ts';

/**
 * Messages between the extension host and its webviews. The host validates everything that
 * arrives from a webview with these schemas; what it sends is typed by the same file.
 */

const EpicId = z.string().regex(EPIC_ID_PATTERN);

export const ApprovalDecision = z.enum(['approve', 'requestChanges', 'discard']);

export const FromWebview = z.discriminatedUnion('type', [
  z.object({ type: z.literal('ready') }).strict(),
  z
    .object({
      type: z.literal('decide'),
      requestId: z.number().int().nonnegative(),
      decision: ApprovalDecision,
      epicId: EpicId,
      version: z.number().int().positive(),
      feedback: z.string().max(20_000).optional(),
    })
    .strict(),
  z
    .object({
      type: z.literal('act'),
      requestId: z.number().int().nonnegative(),
      epicId: EpicId,
      action: z.enum(['startEpic', 'startAndClaim', 'openHandoff']),
    })
    .strict(),
  z.object({ type: z.literal('selectPlan'), planPath: z.string().min(1).max(1000) }).strict(),
  z
    .object({
      type: z.literal('openStep'),
      planPath: z.string().min(1).max(1000),
      anchor: z.string().regex(/^[a-z0-9][a-z0-9-]*$/),
    })
    .strict(),
  z.object({ type: z.literal('openEpic'), epicId: EpicId, target: z.enum(['tree', 'plan']) }).strict(),
  z.object({ type: z.literal('retryEpic'), epicId: EpicId }).strict(),
  /** A Needs you item's button: the host looks the key up in its own list (nothing to run comes from the webview). */
  z.object({ type: z.literal('needsYou'), key: z.string().min(1).max(2000) }).strict(),
]);
export type FromWebview = z.infer<typeof FromWebview>;

export interface PlanItemDto {
  readonly kind: string;
  readonly text: string;
  readonly checked: boolean;
}
export interface PlanStepDto {
  readonly anchor: string;
  readonly number: string;
  readonly title: string;
  readonly parent: string | null;
  readonly dependsOn: readonly string[];
  readonly items: readonly PlanItemDto[];
  /** Once the plan is approved, the step's status in the store (items are ticked as the store has them). */
  readonly status?: string;
}

export interface ApprovalData {
  /** `planner`: who writes its plans, lisa or person (feedback is for them). */
  readonly epic: {
    readonly id: string;
    readonly title: string;
    readonly status: string;
    readonly complexity: string;
    readonly planner: string;
    /** While its budget is spent: what it spent (`$20.40 of $20`), said as paused, as the tree says it. */
    readonly paused: string | null;
  };
  readonly version: {
    readonly version: number;
    readonly of: number;
    readonly status: string;
    readonly planPath: string;
    readonly proposedBy: string | null;
    readonly createdAt: string;
    readonly title: string;
    readonly sections: Readonly<Record<string, string>>;
    readonly steps: readonly PlanStepDto[];
  } | null;
  readonly changes: readonly string[];
  readonly previousVersion: number | null;
  readonly feedbackHistory: readonly { readonly version: number; readonly feedback: string }[];
  /** The handoff file's name once approval wrote it (the host opens it; the webview never sees paths). */
  readonly handoff: string | null;
  /** Once the approved plan is in the store: steps completed of all, as the store has them now. */
  readonly progress: { readonly done: number; readonly total: number } | null;
}

export interface GraphNode {
  readonly anchor: string;
  /** "Step 2.1" */
  readonly name: string;
  readonly title: string;
  /** completed, in_progress, claimed, expired (a lease ran out), ready, or waiting (on dependencies). */
  readonly status: string;
  readonly lease: string | null;
  /** By name: "you", an agent id or a worktree's folder, never a path. */
  readonly holder: string | null;
}

/** One event as the dashboard's timeline shows it: no hashes, paths or ISO text in `text` or `reason`. */
export interface TimelineEntry {
  readonly id: number;
  readonly at: string;
  readonly who: string;
  /** person, lisa, ralph, bart, lovejoy, or agent (another agent id): what the "who" filter offers. */
  readonly role: string;
  /** epic, plan, step, signal, run or other: what the "kind" filter offers. */
  readonly kind: string;
  readonly epicId: string | null;
  readonly text: string;
  readonly reason: string | null;
  /** What a retrospective found, one line each (shown as a list under the entry). */
  readonly lines?: readonly string[];
}

export interface DashboardEpic {
  readonly id: string;
  readonly title: string;
  readonly status: string;
  readonly complexity: string;
  readonly iteration: number;
  readonly budget: number;
  readonly planPath: string | null;
  readonly planTitle: string | null;
  readonly stepsDone: number;
  readonly stepsTotal: number;
  readonly awaitingApproval: boolean;
  /** Why it is blocked, in words, when it is. */
  readonly blockedReason: string | null;
  /** Blocked by a failing agent or a drifted plan: a person lifts it with Retry. */
  readonly retryable: boolean;
  /** Agent sessions spent on the epic, by role. */
  readonly sessions: Readonly<Record<string, number>>;
  /** Where it is built: its worktree's folder name, and the full path for a tooltip (null before it starts, and once merged). */
  readonly worktree: { readonly name: string; readonly path: string } | null;
  /** Cost its agents reported (USD), null when none reported any; tokens likewise. */
  readonly costUsd: number | null;
  readonly tokens: number | null;
  /** Spend against each limit that is set (docs/budgets.md): "$4.20 of $20", with the share spent (0..1+). */
  readonly spend: readonly {
    readonly kind: 'usd' | 'tokens' | 'minutes';
    readonly text: string;
    readonly share: number;
    readonly own: boolean;
  }[];
  /** Paused by its budget: what a person reads (pausedMessage), else null. */
  readonly paused: string | null;
  /** Waiting on a preset's usage limit: "waiting: claude limited until 14:05 (Lisa)", else null. */
  readonly limitWait: string | null;
  /** What its branch would conflict with if merged now (an epic under way; docs/files.md). */
  readonly conflictsAhead: readonly {
    readonly with: string;
    readonly withTitle: string;
    readonly files: readonly string[];
  }[];
  /** "conflicts at merge: 2 met — 1 resolved mechanically, 1 by Ralph, 0 by a person", or null when none was met. */
  readonly conflictsAtMerge: string | null;
}

/** One thing waiting for the person, as the dashboard lists it. */
export interface NeedsYouDto {
  readonly key: string;
  readonly text: string;
  /** The button's words. */
  readonly label: string;
  readonly epicId: string | null;
}

/** The dashboard's Stats view (docs/stats.md): three charts, each with the numbers behind it. */
export interface StatsDto {
  /** The window's start (the view covers the last weeks). */
  readonly since: string;
  /** Cost per merged step per preset, per week of the merge (weeks are their Monday, YYYY-MM-DD). */
  readonly costOverTime: {
    readonly weeks: readonly string[];
    readonly series: readonly {
      readonly preset: string;
      readonly points: readonly { readonly week: string; readonly costPerStep: number; readonly steps: number }[];
    }[];
  };
  /** First-pass review acceptance per preset and kind of step. */
  readonly acceptance: readonly {
    readonly preset: string;
    readonly kind: string;
    readonly accepted: number;
    readonly reviewed: number;
    readonly rate: number;
  }[];
  /** Sessions per merged step per preset, against the seed's steps + 2 per epic. */
  readonly sessions: readonly {
    readonly preset: string;
    readonly steps: number;
    readonly perStep: number;
    readonly seed: number;
  }[];
}

export interface DashboardData {
  readonly now: string;
  /** What waits for the person (the first figure and the list above the cards), and the scheduler's idle line. */
  readonly needsYou: {
    readonly items: readonly NeedsYouDto[];
    readonly idle: string | null;
    readonly fleet?: string | null;
  };
  readonly figures: {
    readonly epics: number;
    readonly byStatus: Readonly<Record<string, number>>;
    readonly agentsRunning: number;
    readonly stepsClaimed: number;
    readonly sessionsThisWeek: number;
    /** Today's spend of all epics (UTC day) against the daily budget, null when there is none. */
    readonly today: { readonly usd: string; readonly limit: string | null; readonly spent: boolean };
  };
  readonly epics: readonly DashboardEpic[];
  readonly plans: readonly {
    readonly planPath: string;
    readonly title: string;
    readonly epicId: string | null;
    readonly stepsDone: number;
    readonly stepsTotal: number;
  }[];
  readonly selectedPlan: string | null;
  readonly graph: {
    readonly nodes: readonly GraphNode[];
    readonly edges: readonly (readonly [string, string])[];
  } | null;
  readonly leases: readonly {
    readonly planPath: string;
    readonly planTitle: string;
    readonly epicId: string | null;
    readonly epicTitle: string | null;
    readonly anchor: string;
    readonly step: string;
    readonly stepTitle: string;
    readonly holder: string;
    readonly expiresAt: string;
  }[];
  readonly runs: readonly {
    readonly id: number;
    readonly role: string;
    readonly epicId: string | null;
    readonly step: string | null;
    readonly status: string;
    readonly startedAt: string;
    readonly exitCode: number | null;
    /** Why it ended as it did, and its last output lines (for a run that did not succeed). */
    readonly reason: string | null;
    readonly outputTail: string;
  }[];
  readonly verifications: readonly {
    readonly command: string;
    readonly verdict: string;
    readonly exitCode: number | null;
    readonly at: string;
    readonly durationMs: number;
    readonly epicId: string | null;
  }[];
  readonly events: readonly TimelineEntry[];
  /** Every epic's title by its id: runs, verification and the timeline name epics as the person knows them. */
  readonly epicTitles: Readonly<Record<string, string>>;
  /** The outcome ledger's charts. */
  readonly stats: StatsDto;
  /** The debt register: epics set aside, why and since when. */
  readonly debt: readonly {
    readonly epicId: string;
    readonly title: string;
    readonly reason: string;
    readonly at: string;
  }[];
}

export type ToWebview =
  | { readonly type: 'approval'; readonly data: ApprovalData }
  | { readonly type: 'dashboard'; readonly data: DashboardData }
  | {
      readonly type: 'result';
      readonly requestId: number;
      readonly ok: boolean;
      readonly message: string;
      readonly lines: readonly string[];
      /** The plan version the result is about: shown only while that version is on screen. */
      readonly version?: number;
      /** The epic's status right after the action: the result goes once the epic has moved on. */
      readonly epicStatus?: string;
    };
