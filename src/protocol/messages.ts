import { z } from 'zod';

/**
 * Messages between the extension host and its webviews. The host validates everything that
 * arrives from a webview with these schemas; what it sends is typed by the same file.
 */

export const ApprovalDecision = z.enum(['approve', 'requestChanges', 'discard']);

export const FromWebview = z.discriminatedUnion('type', [
  z.object({ type: z.literal('ready') }).strict(),
  z.object({
    type: z.literal('decide'),
    requestId: z.number().int().nonnegative(),
    decision: ApprovalDecision,
    epicId: z.string().regex(/^sf-[0-9a-f]{4,6}$/),
    version: z.number().int().positive(),
    feedback: z.string().max(20_000).optional(),
  }).strict(),
  z.object({ type: z.literal('selectPlan'), planPath: z.string().min(1).max(1000) }).strict(),
  z.object({ type: z.literal('openStep'), planPath: z.string().min(1).max(1000), anchor: z.string().regex(/^[a-z0-9][a-z0-9-]*$/) }).strict(),
]);
export type FromWebview = z.infer<typeof FromWebview>;

export interface PlanItemDto { readonly kind: string; readonly text: string; readonly checked: boolean }
export interface PlanStepDto {
  readonly anchor: string;
  readonly number: string;
  readonly title: string;
  readonly parent: string | null;
  readonly dependsOn: readonly string[];
  readonly items: readonly PlanItemDto[];
}

export interface ApprovalData {
  readonly epic: { readonly id: string; readonly title: string; readonly status: string; readonly complexity: string };
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
}

export interface GraphNode { readonly anchor: string; readonly title: string; readonly status: string; readonly lease: string | null; readonly holder: string | null }
export interface DashboardData {
  readonly now: string;
  readonly figures: { readonly byStatus: Readonly<Record<string, number>>; readonly agentsRunning: number; readonly stepsClaimed: number; readonly sessionsThisWeek: number };
  readonly epics: readonly {
    readonly id: string; readonly title: string; readonly status: string; readonly complexity: string; readonly iteration: number; readonly budget: number;
    readonly planPath: string | null; readonly stepsDone: number; readonly stepsTotal: number; readonly awaitingApproval: boolean;
    /** Agent sessions spent on the epic, by role. */
    readonly sessions: Readonly<Record<string, number>>;
  }[];
  readonly plans: readonly { readonly planPath: string; readonly title: string; readonly stepsDone: number; readonly stepsTotal: number }[];
  readonly selectedPlan: string | null;
  readonly graph: { readonly nodes: readonly GraphNode[]; readonly edges: readonly (readonly [string, string])[] } | null;
  readonly leases: readonly { readonly planPath: string; readonly anchor: string; readonly holder: string; readonly agent: string | null; readonly expiresAt: string }[];
  readonly runs: readonly { readonly id: number; readonly role: string; readonly epicId: string | null; readonly step: string | null; readonly status: string; readonly startedAt: string; readonly exitCode: number | null }[];
  readonly verifications: readonly { readonly command: string; readonly verdict: string; readonly exitCode: number | null; readonly at: string; readonly durationMs: number }[];
  readonly events: readonly { readonly id: number; readonly at: string; readonly who: string; readonly what: string; readonly reason: string | null }[];
}

export type ToWebview =
  | { readonly type: 'approval'; readonly data: ApprovalData }
  | { readonly type: 'dashboard'; readonly data: DashboardData }
  | { readonly type: 'result'; readonly requestId: number; readonly ok: boolean; readonly message: string; readonly lines: readonly string[] };
