/**
 * The Springfield tools an agent inside an editor or an MCP client calls instead of the CLI: their
 * names, descriptions, input schemas (zod, the one place their input is parsed; JSON Schema is
 * derived from it) and what a person is asked before each runs. Implementations: tools.ts.
 */
import { z } from 'zod';
import { SIGNAL_TYPES } from '../epics/transitions.ts';
import { ITEM_KINDS } from '../plan/types.ts';
import { ITEM_STATUSES } from '../store/types.ts';
import { EPIC_ID_PATTERN } from '../../shared/epicId.ts';

/**
 * Text an agent passes: never with a NUL byte, which no path, git argument or PostgreSQL text can
 * hold (refused here, naming the argument, rather than by Node or the server further in).
 */
const text = () => z.string().refine((s) => !s.includes('\0'), 'must not contain a NUL byte');
const epicId = text().regex(EPIC_ID_PATTERN, 'an epic id looks like sf-a3f8');
const anchor = text().regex(/^[a-z0-9][a-z0-9-]*$/, 'a step anchor looks like step-2 or step-2-1');
const planPath = text().min(1).max(4096).describe('the plan file, relative to the worktree root, e.g. plans/cache.md');
const status = z.enum(ITEM_STATUSES as [string, ...string[]]);

export const ContextInput = z.strictObject({
  epic: epicId.optional().describe('the epic (default: the epic of the step this worktree holds)'),
  step: anchor.optional().describe('the step (default: the step this worktree holds)'),
});

export const ClaimInput = z.strictObject({
  plan: planPath,
  lease_seconds: z.int().min(30).max(31_622_400).optional().describe('lease length in seconds (default 7200)'),
});

export const UpdateInput = z
  .strictObject({
    plan: planPath,
    step: anchor.describe('the step (or substep) the items belong to'),
    items: z
      .array(
        z.strictObject({
          kind: z.enum(ITEM_KINDS as [string, ...string[]]),
          index: z.int().min(0).max(10_000).describe('the item number within its kind, counting from 0'),
          status,
        }),
      )
      .max(1000)
      .optional()
      .describe('items to set'),
    all: status.optional().describe('set every item of the step to this status'),
  })
  .refine((v) => (v.items?.length ?? 0) > 0 || v.all !== undefined, { message: 'give items or all' });

export const CommitInput = z.strictObject({
  message: text().trim().min(1, 'the commit message is empty').max(10_000),
  step: anchor.optional().describe('the step (default: the one top-level step this worktree holds)'),
  plan: planPath.optional(),
});

export const SignalInput = z.strictObject({
  epic: epicId,
  type: z.enum(SIGNAL_TYPES as [string, ...string[]]),
  summary: text().trim().min(1, 'the summary is empty').max(2000).describe('the finding in one sentence'),
  locations: z
    .array(
      z.strictObject({
        file: text().min(1).max(4096).describe('repository-relative path'),
        line: z.int().min(1).max(10_000_000),
        end_line: z.int().min(1).max(10_000_000).optional(),
        note: text().max(2000).optional(),
      }),
    )
    .max(100)
    .default([])
    .describe('where in the code, one entry per place'),
});

export interface ToolMeta {
  readonly name: string;
  readonly title: string;
  readonly description: string;
  readonly input: z.ZodType;
  /** Reads only: no confirmation is asked. */
  readonly readOnly: boolean;
}

export const TOOL_META = {
  context: {
    name: 'springfield_context',
    title: 'Springfield context',
    readOnly: true,
    input: ContextInput,
    description:
      "Everything a session needs to work on this repository's Springfield epics: the epic's intent, approach and constraints, the step this worktree holds and its checklist, review signals, verification failures, documents to read and the next commands. Call it first.",
  },
  claim: {
    name: 'springfield_claim_next_step',
    title: 'Claim next Springfield step',
    readOnly: false,
    input: ClaimInput,
    description:
      'Atomically claim the next ready step of a plan for this worktree, under a lease. Nothing ready is not an error: claimed is false with the reason.',
  },
  update: {
    name: 'springfield_update_items',
    title: 'Update Springfield checklist items',
    readOnly: false,
    input: UpdateInput,
    description:
      'Set checklist items (tasks, tests, checkpoints) of a step this worktree holds to open, in_progress or completed. Tick each item as soon as it is done.',
  },
  commit: {
    name: 'springfield_commit_step',
    title: 'Commit the Springfield step',
    readOnly: false,
    input: CommitInput,
    description:
      "Commit every change in this worktree (git add -A) with Springfield's step, plan and epic trailers, then complete the step. Refused, before git runs, while an item is open or when this worktree does not hold the step.",
  },
  signal: {
    name: 'springfield_record_signal',
    title: 'Record a Springfield review signal',
    readOnly: false,
    input: SignalInput,
    description:
      'Record exactly one typed review signal for an implemented epic, with file:line locations, and apply its transition: pass → verified, implementation_failure → back to the builder, option_viability_failure or adr_invalidated → back to the planner.',
  },
} as const satisfies Record<string, ToolMeta>;

export type ToolKey = keyof typeof TOOL_META;

/** The JSON Schema of a tool's input, as the editor and MCP clients see it. */
export function toolJsonSchema(key: ToolKey): Record<string, unknown> {
  const schema = z.toJSONSchema(TOOL_META[key].input, { io: 'input', unrepresentable: 'any' }) as Record<
    string,
    unknown
  >;
  delete schema.$schema;
  return schema;
}
