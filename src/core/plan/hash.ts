import { createHash } from 'node:crypto';
import { ITEM_KINDS } from './types.ts';
import type { ItemKind, Plan } from './types.ts';

export interface StepStructure {
  readonly anchor: string;
  readonly parent: string | null;
  readonly title: string;
  readonly deps: readonly string[];
  /** Present only when the step names files, so a plan without `**Files:**` lines keeps the hash it had. */
  readonly files?: readonly string[];
  readonly items: readonly (readonly [ItemKind, string])[];
}

/** The structural, JSON-able view of a plan that its hash covers (no checkmarks, lines or prose). */
export interface PlanStructure {
  readonly title: string;
  readonly steps: readonly StepStructure[];
}

/** The canonical structure of a plan: title, then per step anchor, parent, title, deps and items. */
export function planStructure(plan: Plan): PlanStructure {
  return {
    title: plan.title,
    steps: plan.steps.map((s) => ({
      anchor: s.anchor,
      parent: s.parentAnchor,
      title: s.title,
      deps: [...s.dependsOn],
      ...(s.files.length > 0 ? { files: [...s.files] } : {}),
      items: s.items.map((i): [ItemKind, string] => [i.kind, i.text]),
    })),
  };
}

/** The plan's canonical structure as JSON: what plan_files.structure holds and what the hash covers. */
export function structureJson(plan: Plan): string {
  let json = structures.get(plan);
  if (json === undefined) {
    json = JSON.stringify(planStructure(plan));
    structures.set(plan, json);
  }
  return json;
}

/** sha256 hex of the plan's canonical structure: ticking boxes or re-wrapping text keeps it. */
export function planHash(plan: Plan): string {
  let hash = hashes.get(plan);
  if (hash === undefined) {
    hash = createHash('sha256').update(structureJson(plan)).digest('hex');
    hashes.set(plan, hash);
  }
  return hash;
}

/** The hash of this parsed plan if already known, without computing it. */
export function knownPlanHash(plan: Plan): string | undefined {
  return hashes.get(plan);
}

/** Records a hash learned by matching the plan's structure against one whose hash is stored. */
export function rememberPlanHash(plan: Plan, hash: string): void {
  hashes.set(plan, hash);
}

/** Parsed plans are immutable, so each is serialised and hashed at most once. */
const structures = new WeakMap<Plan, string>();
const hashes = new WeakMap<Plan, string>();

const MAX_QUOTED = 60;

function quote(text: string): string {
  return JSON.stringify(text.length > MAX_QUOTED ? `${text.slice(0, MAX_QUOTED - 1)}…` : text);
}

function list(anchors: readonly string[]): string {
  return anchors.length === 0 ? 'none' : anchors.join(', ');
}

/** Elements of `a` not matched one-for-one in `b`, in `a`'s order. */
function multisetMinus(a: readonly string[], b: readonly string[]): string[] {
  const remaining = new Map<string, number>();
  for (const x of b) remaining.set(x, (remaining.get(x) ?? 0) + 1);
  return a.filter((x) => {
    const n = remaining.get(x) ?? 0;
    if (n > 0) remaining.set(x, n - 1);
    return n === 0;
  });
}

function describeStepDrift(before: StepStructure, after: StepStructure): string[] {
  const a = after.anchor;
  const out: string[] = [];
  if (before.title !== after.title) out.push(`${a} title changed: ${quote(before.title)} → ${quote(after.title)}`);
  if (before.parent !== after.parent)
    out.push(`${a} parent changed: ${before.parent ?? 'none'} → ${after.parent ?? 'none'}`);
  if (list(before.deps) !== list(after.deps))
    out.push(`${a} dependencies changed: ${list(before.deps)} → ${list(after.deps)}`);
  if (list(before.files ?? []) !== list(after.files ?? []))
    out.push(`${a} files changed: ${list(before.files ?? [])} → ${list(after.files ?? [])}`);
  let itemsDescribed = false;
  for (const kind of ITEM_KINDS) {
    const was = before.items.filter(([k]) => k === kind).map(([, t]) => t);
    const now = after.items.filter(([k]) => k === kind).map(([, t]) => t);
    const removed = multisetMinus(was, now);
    const added = multisetMinus(now, was);
    for (const t of removed) out.push(`${a} ${kind} removed: ${quote(t)}`);
    for (const t of added) out.push(`${a} ${kind} added: ${quote(t)}`);
    if (removed.length === 0 && added.length === 0 && was.join('\n') !== now.join('\n'))
      out.push(`${a} ${kind}s reordered`);
    itemsDescribed ||= removed.length > 0 || added.length > 0 || was.join('\n') !== now.join('\n');
  }
  if (!itemsDescribed && JSON.stringify(before.items) !== JSON.stringify(after.items)) out.push(`${a} items reordered`);
  return out;
}

/** Human-readable structural differences between two plan structures, in a deterministic order. */
export function describeDrift(before: PlanStructure, after: PlanStructure): string[] {
  const out: string[] = [];
  if (before.title !== after.title) out.push(`plan title changed: ${quote(before.title)} → ${quote(after.title)}`);
  const beforeByAnchor = new Map(before.steps.map((s) => [s.anchor, s]));
  const afterByAnchor = new Map(after.steps.map((s) => [s.anchor, s]));
  for (const s of before.steps) if (!afterByAnchor.has(s.anchor)) out.push(`${s.anchor} removed`);
  for (const s of after.steps) {
    const old = beforeByAnchor.get(s.anchor);
    if (old) out.push(...describeStepDrift(old, s));
    else out.push(`${s.anchor} added`);
  }
  const keptBefore = before.steps.filter((s) => afterByAnchor.has(s.anchor)).map((s) => s.anchor);
  const keptAfter = after.steps.filter((s) => beforeByAnchor.has(s.anchor)).map((s) => s.anchor);
  if (keptBefore.join(' ') !== keptAfter.join(' ')) out.push('steps reordered');
  if (out.length === 0 && JSON.stringify(before) !== JSON.stringify(after)) out.push('plan structure changed');
  return out;
}
