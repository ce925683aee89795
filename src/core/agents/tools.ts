/**
 * The Springfield tools' implementations, shared by the editor's language-model tools and the MCP
 * server (`springfield mcp`): input is parsed with the zod schemas of toolSchemas.ts, and every
 * operation goes through the same core calls as the CLI, so the store's rules hold unchanged.
 * Their public API, apart from core/index.ts: those schemas use the full zod (docs/architecture.md).
 */
import { existsSync, realpathSync } from 'node:fs';
import { isAbsolute, relative, resolve, sep } from 'node:path';
import type { z } from 'zod';
import type { SignalType } from '../epics/transitions.ts';
import { SpringfieldError, UsageError } from '../errors.ts';
import { commitStep } from '../git/commit.ts';
import { readHead } from '../git/head.ts';
import type { RepoLocation } from '../git/repo.ts';
import { readPlanFile } from '../plan/parse.ts';
import { planSourceOf } from '../plan/source.ts';
import type { ItemKind, PlanSource } from '../plan/types.ts';
import type { Store } from '../store/index.ts';
import type { Actor, ItemChange, ItemStatus } from '../store/types.ts';
import { nothingClaimedText } from '../names.ts';
import { LostReplies } from './lostReplies.ts';
import { toolWording } from './toolWording.ts';
import {
  ClaimInput,
  CommitInput,
  ContextInput,
  SignalInput,
  TOOL_META,
  UpdateInput,
  type ToolKey,
} from './toolSchemas.ts';
import type { ContextView, SignalLocation } from '../store/epicTypes.ts';

/** What a tool call acts with: the repository, who acts, and the store (opened by the adapter). */
export interface ToolSession {
  readonly location: RepoLocation;
  readonly actor: Actor;
  /** Environment for git (commit). */
  readonly env: NodeJS.ProcessEnv;
  withStore<T>(fn: (store: Store) => Promise<T>): Promise<T>;
  /** The CLI's markdown rendering of a context (src/cli/render/contextText.ts). */
  renderContext(view: ContextView): string;
  /**
   * Operation ids of claims and signals whose reply was lost, kept for the next call with the same
   * input: one per MCP server or editor window, for its whole life (docs/postgres-design.md, "Failures, retries, idempotence").
   */
  readonly lostReplies: LostReplies;
}

export { LostReplies };
export { TOOL_META, toolJsonSchema, type ToolKey } from './toolSchemas.ts';

export interface ToolOutcome {
  /** For the model: one readable text. */
  readonly text: string;
  /** The same as the CLI's --json document. */
  readonly data: unknown;
}

/** The tool whose name is `name`, or undefined. */
export function toolKeyOf(name: string): ToolKey | undefined {
  return (Object.keys(TOOL_META) as ToolKey[]).find((k) => TOOL_META[k].name === name);
}

/**
 * Parses the input (a UsageError naming every problem when it does not fit) and runs the tool. A
 * refusal is rethrown in the tools' words (toolWording.ts): its code and class stay as they were.
 */
export async function runTool(key: ToolKey, rawInput: unknown, session: ToolSession): Promise<ToolOutcome> {
  try {
    return await dispatch(key, parseInput(key, rawInput), session);
  } catch (err) {
    if (err instanceof SpringfieldError) err.message = toolWording(err.message);
    throw err;
  }
}

function dispatch(key: ToolKey, input: unknown, session: ToolSession): Promise<ToolOutcome> {
  switch (key) {
    case 'context':
      return context(session, input as z.infer<typeof ContextInput>);
    case 'claim':
      return claim(session, input as z.infer<typeof ClaimInput>);
    case 'update':
      return update(session, input as z.infer<typeof UpdateInput>);
    case 'commit':
      return commit(session, input as z.infer<typeof CommitInput>);
    case 'signal':
      return signal(session, input as z.infer<typeof SignalInput>);
  }
}

/** The tool's input parsed by its schema; bad input is a UsageError, before anything is read or written. */
export function parseInput(key: ToolKey, rawInput: unknown): unknown {
  const parsed = TOOL_META[key].input.safeParse(rawInput ?? {});
  if (parsed.success) return parsed.data;
  const problems = parsed.error.issues.map((i) => `${i.path.length ? i.path.join('.') : '(input)'}: ${i.message}`);
  throw new UsageError('bad_tool_input', `${TOOL_META[key].name}: ${problems.join('; ')}`);
}

/** What a person is asked before a tool that writes runs (null: read-only, nothing to confirm). */
export function confirmationFor(
  key: ToolKey,
  rawInput: unknown,
  actor: Actor,
): { title: string; message: string } | null {
  if (TOOL_META[key].readOnly) return null;
  let input: Record<string, unknown>;
  try {
    input = parseInput(key, rawInput) as Record<string, unknown>;
  } catch {
    return {
      title: TOOL_META[key].title,
      message: 'The input does not fit the tool; it will be refused without changing anything.',
    };
  }
  const where = `worktree ${actor.worktree}`;
  const title = TOOL_META[key].title;
  switch (key) {
    case 'claim':
      return { title, message: `Claim the next ready step of ${String(input.plan)} for ${where}?` };
    case 'update': {
      const u = input as z.infer<typeof UpdateInput>;
      const what = [
        ...(u.items ?? []).map((i) => `${i.kind} ${i.index} → ${i.status}`),
        ...(u.all ? [`every item → ${u.all}`] : []),
      ].join(', ');
      return { title, message: `Set checklist items of ${u.step} in ${u.plan}: ${what}?` };
    }
    case 'commit':
      return {
        title,
        message: `Commit every change in ${where} (git add -A) as "${String(input.message)}" and complete ${input.step ? String(input.step) : 'the step it holds'}?`,
      };
    case 'signal': {
      const s = input as z.infer<typeof SignalInput>;
      return {
        title,
        message: `Record a ${s.type} signal for ${s.epic} ("${s.summary}", ${s.locations.length} location${s.locations.length === 1 ? '' : 's'}) and move the epic accordingly?`,
      };
    }
    default:
      return null;
  }
}

async function context(s: ToolSession, input: z.infer<typeof ContextInput>): Promise<ToolOutcome> {
  const view = await s.withStore((store) =>
    store.context({
      epicId: input.epic,
      stepAnchor: input.step,
      actor: s.actor,
      docsRoot: s.location.mainRoot ?? s.location.worktreeRoot,
    }),
  );
  return { text: s.renderContext(view), data: view };
}

async function claim(s: ToolSession, input: z.infer<typeof ClaimInput>): Promise<ToolOutcome> {
  const source = planSource(s, input.plan);
  const r = await s.lostReplies.run(TOOL_META.claim.name, input, s.actor, (resume) =>
    s.withStore((store) =>
      store.claimNext(source, s.actor, {
        leaseSeconds: input.lease_seconds,
        branch: readHead(s.actor.worktree, process.env)?.branch ?? null,
        ...(resume ? { resume } : {}),
      }),
    ),
  );
  const text = r.claimed
    ? `${r.resumed ? `Resumed the claim an earlier call made (its reply was lost): ${r.step_anchor} is yours. ` : ''}Claimed ${r.step_anchor} (${r.step_title}) of ${r.plan_path}: claim token ${r.claim_token}, lease until ${r.lease_expires_at}. Next: do its items, tick them with springfield_update_items, then springfield_commit_step.`
    : nothingClaimedText(r);
  return { text, data: r };
}

async function update(s: ToolSession, input: z.infer<typeof UpdateInput>): Promise<ToolOutcome> {
  const changes: ItemChange[] = (input.items ?? []).map((i) => ({
    selector: { kind: i.kind as ItemKind, ordinal: i.index },
    status: i.status as ItemStatus,
  }));
  if (input.all) changes.push({ selector: { all: true }, status: input.all as ItemStatus });
  const source = planSource(s, input.plan);
  const r = await s.withStore((store) => store.updateItems(source, input.step, changes, s.actor));
  return {
    text: `Updated ${r.updated} item${r.updated === 1 ? '' : 's'} of ${r.step_anchor}; step is ${r.step_status}.`,
    data: r,
  };
}

async function commit(s: ToolSession, input: z.infer<typeof CommitInput>): Promise<ToolOutcome> {
  const planKey = input.plan !== undefined ? repoPath(s, input.plan, 'plan') : undefined;
  return s.withStore(async (store) => {
    const target = await store.commitTarget({
      step: input.step,
      planPath: planKey,
      worktree: s.actor.worktree,
      agent: s.actor.agent,
    });
    const source = planSource(s, target.planPath);
    const r = await commitStep({
      store,
      source,
      anchor: target.anchor,
      actor: s.actor,
      message: input.message,
      cwd: s.actor.worktree,
      env: s.env,
      add: true,
      forceReason: null,
    });
    const short = r.commit_hash.slice(0, 12);
    const text = r.state_update_failed
      ? `Committed ${short}, but completing ${r.step_anchor} failed: ${toolWording(r.state_error.message)}. Run 'springfield reconcile' to repair it.`
      : `Committed ${short} and completed ${r.step_anchor} of ${r.plan_path}${r.plan_completed ? '; the plan is complete' : ''}.`;
    return { text, data: r };
  });
}

async function signal(s: ToolSession, input: z.infer<typeof SignalInput>): Promise<ToolOutcome> {
  const locations: SignalLocation[] = input.locations.map((l) => {
    if (l.end_line !== undefined && l.end_line < l.line)
      throw new UsageError('bad_location', `${l.file}:${l.line}:${l.end_line}: the end line is before the start line`);
    return { file: repoPath(s, l.file, 'location'), line: l.line, endLine: l.end_line ?? null, note: l.note ?? null };
  });
  const r = await s.lostReplies.run(TOOL_META.signal.name, input, s.actor, (resume) =>
    s.withStore((store) =>
      store.recordSignal(
        input.epic,
        input.type as SignalType,
        input.summary,
        locations,
        s.actor,
        false,
        resume ? { resume } : undefined,
      ),
    ),
  );
  const t = r.transition;
  return {
    text: `Recorded ${r.type} signal #${r.signal_id} for ${r.epic_id}${t ? `: ${t.from} → ${t.to}` : ''}${r.resumed ? ' (by an earlier call whose reply was lost)' : ''}.`,
    data: r,
  };
}

function root(s: ToolSession): string {
  const r = s.location.worktreeRoot;
  if (!r) throw new UsageError('no_worktree', 'not inside a worktree (a bare repository has none)');
  return r;
}

/** A path inside this worktree, as the store keys it: relative, with forward slashes. */
function repoPath(s: ToolSession, given: string, what: 'plan' | 'location'): string {
  const base = root(s);
  const abs = resolve(base, given);
  const real = existsSync(abs) ? realpathSync.native(abs) : abs;
  const rel = relative(base, real);
  if (rel === '' || rel.startsWith('..') || isAbsolute(rel))
    throw new UsageError(`${what}_outside_worktree`, `${given}: ${what} must be inside the worktree ${base}`);
  return rel.split(sep).join('/');
}

function planSource(s: ToolSession, given: string): PlanSource {
  const planPath = repoPath(s, given, 'plan');
  return planSourceOf(planPath, readPlanFile(resolve(root(s), planPath), given));
}
