import { isUtf8 } from 'node:buffer';
import { readFileSync } from 'node:fs';
import { PlanError } from '../errors.ts';
import type { ItemKind, Plan, PlanItem, PlanStep } from './types.ts';
import {
  anchorSuffix,
  checkbox,
  dependsOn,
  filesLine,
  fence as fenceOf,
  heading as headingOf,
  isAnchor,
  isContinuation,
  kindLabel,
  listedAnchors,
  splitLines,
  withoutClosingHashes,
  withoutPlanPrefix,
} from './scan.ts';
import { messageOf } from '../../shared/errorMessage.ts';

// The other line tests are string scans (scan.ts): a regular expression is compiled on first use.
const STEP_HEADING_RE = /^step\s+(\d+(?:\.\d+)*)\.?(?=[\s:{]|$)\s*:?(.*)$/i;

interface DependencyDraft {
  readonly anchor: string;
  readonly line: number;
}

interface ItemDraft {
  readonly kind: ItemKind;
  readonly ordinal: number;
  text: string;
  readonly checked: boolean;
  readonly line: number;
}

interface StepDraft {
  readonly anchor: string;
  readonly parentAnchor: string | null;
  readonly number: string;
  readonly title: string;
  readonly line: number;
  readonly deps: DependencyDraft[];
  readonly files: string[];
  readonly items: ItemDraft[];
}

interface Fence {
  readonly char: string;
  readonly length: number;
}

/** Collapses runs of whitespace to single spaces and trims, so re-wrapping never changes text. */
function normalise(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/** Parses a plan file's text (docs/plan-grammar.md); throws PlanError(file, line, reason) on a malformed plan. */
export function parsePlan(text: string, file: string): Plan {
  const lines = splitLines(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
  const steps: StepDraft[] = [];
  const anchorLines = new Map<string, number>();
  const sections = new Map<string, string[]>();
  let title: string | null = null;
  let step: StepDraft | null = null; // the step or substep receiving lines
  let parent: StepDraft | null = null; // the current top-level step, for `### Step` headings
  let sectionBody: string[] | null = null;
  let kind: ItemKind = 'task';
  let lastItem: ItemDraft | null = null;
  let fence: Fence | null = null;

  const openStep = (level: number, match: RegExpExecArray, line: number): void => {
    if (level === 3 && parent === null) throw new PlanError(file, line, 'substep outside a step');
    const number = match[1] ?? '';
    let rest = match[2] ?? '';
    let anchor = `step-${number.replaceAll('.', '-')}`;
    const explicit = anchorSuffix(rest);
    if (explicit) {
      anchor = explicit.anchor.trim();
      rest = rest.slice(0, explicit.index);
      if (!isAnchor(anchor)) {
        throw new PlanError(file, line, `invalid anchor "${anchor}" (use lowercase letters, digits and dashes)`);
      }
    }
    const stepTitle = normalise(rest);
    if (stepTitle === '') throw new PlanError(file, line, 'empty step title');
    const first = anchorLines.get(anchor);
    if (first !== undefined) throw new PlanError(file, line, `duplicate anchor ${anchor} (first at line ${first})`);
    anchorLines.set(anchor, line);
    const draft: StepDraft = {
      anchor,
      parentAnchor: level === 3 && parent ? parent.anchor : null,
      number,
      title: stepTitle,
      line,
      deps: [],
      files: [],
      items: [],
    };
    steps.push(draft);
    step = draft;
    if (level === 2) parent = draft;
    sectionBody = null;
    kind = 'task';
    lastItem = null;
  };

  for (const [index, raw] of lines.entries()) {
    const line = index + 1;
    const fenceMatch = fenceOf(raw);
    if (fence) {
      const marker = fenceMatch?.marker ?? '';
      if (marker[0] === fence.char && marker.length >= fence.length && (fenceMatch?.info ?? '').trim() === '')
        fence = null;
      sectionBody?.push(raw);
      continue;
    }
    if (fenceMatch && !(fenceMatch.marker.startsWith('`') && fenceMatch.info.includes('`'))) {
      const marker = fenceMatch.marker;
      fence = { char: marker[0] ?? '`', length: marker.length };
      sectionBody?.push(raw);
      lastItem = null;
      continue;
    }

    const heading = headingOf(raw);
    if (heading) {
      const level = heading.level;
      const headingText = withoutClosingHashes(heading.text ?? '').trim();
      if (level === 1 && title === null) {
        title = normalise(withoutPlanPrefix(headingText));
        continue;
      }
      const stepMatch = level === 2 || level === 3 ? STEP_HEADING_RE.exec(headingText) : null;
      if (stepMatch) {
        openStep(level, stepMatch, line);
        continue;
      }
      if (level === 2) {
        const name = normalise(headingText);
        const existing = sections.get(name);
        if (existing) existing.push('');
        sectionBody = existing ?? [];
        sections.set(name, sectionBody);
        step = null;
        parent = null;
        lastItem = null;
        continue;
      }
      // any other heading is prose: it falls through to the generic handling below
    }

    const trimmed = raw.trim();
    if (trimmed === '') {
      sectionBody?.push(raw);
      continue;
    }
    const depends = dependsOn(trimmed);
    if (depends !== null) {
      if (!step) throw new PlanError(file, line, 'dependency line outside a step');
      const current: StepDraft = step;
      for (const token of listedAnchors(depends)) {
        const anchor = token.startsWith('#') ? token.slice(1) : token;
        if (anchor === '' || anchor.toLowerCase() === 'none') continue;
        if (!current.deps.some((d) => d.anchor === anchor)) current.deps.push({ anchor, line });
      }
      lastItem = null;
      continue;
    }
    const files = filesLine(trimmed);
    if (files !== null) {
      if (!step) throw new PlanError(file, line, 'files line outside a step');
      const current: StepDraft = step;
      for (const glob of fileGlobs(files, file, line)) if (!current.files.includes(glob)) current.files.push(glob);
      lastItem = null;
      continue;
    }
    const box = checkbox(raw);
    if (box) {
      if (!step) throw new PlanError(file, line, 'checklist item outside a step');
      const current: StepDraft = step;
      const itemText = normalise(box.text);
      if (itemText === '') throw new PlanError(file, line, 'empty checklist item');
      const ordinal = current.items.filter((i) => i.kind === kind).length;
      const item: ItemDraft = { kind, ordinal, text: itemText, checked: box.box !== ' ', line };
      current.items.push(item);
      lastItem = item;
      continue;
    }
    if (step) {
      const label = kindLabel(trimmed);
      if (label) {
        kind = label;
        lastItem = null;
        continue;
      }
      if (lastItem && isContinuation(raw)) {
        lastItem.text = normalise(`${lastItem.text} ${trimmed}`);
        continue;
      }
    }
    sectionBody?.push(raw);
    lastItem = null;
  }

  // The whole file is at fault; line 1 is where a reader starts looking (and all an empty file has).
  if (steps.length === 0) throw new PlanError(file, 1, 'plan has no steps (a step is a "## Step N: Title" heading)');
  validateDependencies(steps, file);
  return {
    title: title ?? '',
    steps: steps.map((s, stepIndex): PlanStep => ({
      anchor: s.anchor,
      parentAnchor: s.parentAnchor,
      number: s.number,
      title: s.title,
      stepIndex,
      dependsOn: s.deps.map((d) => d.anchor),
      files: [...s.files],
      items: s.items.map((i): PlanItem => ({
        kind: i.kind,
        ordinal: i.ordinal,
        text: i.text,
        checked: i.checked,
        line: i.line,
      })),
      line: s.line,
    })),
    sections: Object.fromEntries([...sections].map(([name, body]) => [name, body.join('\n').trim()])),
  };
}

/**
 * The globs of a `**Files:**` line: comma-separated, backticks allowed, repository-relative (no
 * leading `/`, no `..`, no backslash), `none` for no files.
 */
function fileGlobs(text: string, file: string, line: number): string[] {
  const out: string[] = [];
  for (const raw of text.split(',')) {
    const glob = raw
      .trim()
      .replace(/^`(.*)`$/, '$1')
      .trim();
    if (glob === '' || glob.toLowerCase() === 'none') continue;
    if (glob.startsWith('/') || glob.includes('\\') || glob.split('/').includes('..'))
      throw new PlanError(file, line, `files must be repository-relative globs, got '${glob}'`);
    if (/\s/.test(glob))
      throw new PlanError(file, line, `a file glob has no spaces (separate globs with commas), got '${glob}'`);
    out.push(glob.replace(/^\.\//, ''));
  }
  return out;
}

/** Checks every dependency: known, not itself, not across a step/substep boundary, no cycles. */
function validateDependencies(steps: readonly StepDraft[], file: string): void {
  const byAnchor = new Map(steps.map((s) => [s.anchor, s]));
  for (const step of steps) {
    for (const dep of step.deps) {
      const target = byAnchor.get(dep.anchor);
      const fail = (reason: string): PlanError => new PlanError(file, dep.line, `${step.anchor} depends on ${reason}`);
      if (!target) throw fail(`unknown step ${dep.anchor}`);
      if (target === step) throw fail('itself');
      if (target.parentAnchor === step.anchor) throw fail(`its own substep ${target.anchor}`);
      if (step.parentAnchor === target.anchor) throw fail(`its own parent ${target.anchor}`);
      if (target.parentAnchor !== null && target.parentAnchor !== step.parentAnchor) {
        throw fail(`${target.anchor}, a substep of ${target.parentAnchor}; depend on ${target.parentAnchor} instead`);
      }
    }
  }
  const cycle = findCycle(steps);
  if (cycle) {
    const first = byAnchor.get(cycle[0] ?? '');
    const loop = [...cycle, cycle[0] as string];
    // A long loop is named by its ends, so the refusal stays one readable line.
    const shown = loop.length <= 12 ? loop : [...loop.slice(0, 5), `… ${loop.length - 8} more …`, ...loop.slice(-3)];
    throw new PlanError(
      file,
      first?.line ?? 0,
      `dependency cycle${loop.length > 12 ? ` of ${cycle.length} steps` : ''}: ${shown.join(' → ')}`,
    );
  }
}

/**
 * Finds one dependency cycle, rotated to start at its earliest-declared step, or null. A parent
 * needs its substeps (they go with it), so containment counts as an edge parent → substep.
 */
function findCycle(steps: readonly StepDraft[]): string[] | null {
  const order = new Map(steps.map((s, i) => [s.anchor, i]));
  const edges = new Map<string, string[]>(steps.map((s) => [s.anchor, s.deps.map((d) => d.anchor)]));
  for (const s of steps) if (s.parentAnchor !== null) edges.get(s.parentAnchor)?.push(s.anchor);
  const state = new Map<string, 'visiting' | 'done'>();

  // Depth-first with an explicit stack (a chain of 100,000 steps is as deep as it is long): each
  // frame is a step on the current path and the index of the next edge to follow from it.
  const visit = (root: string): string[] | null => {
    const path: string[] = [root];
    const next: number[] = [0];
    state.set(root, 'visiting');
    while (path.length > 0) {
      const top = path.length - 1;
      const anchor = path[top] as string;
      const out = edges.get(anchor) ?? [];
      const i = next[top] as number;
      if (i >= out.length) {
        path.pop();
        next.pop();
        state.set(anchor, 'done');
        continue;
      }
      next[top] = i + 1;
      const target = out[i] as string;
      const seen = state.get(target);
      if (seen === 'visiting') return path.slice(path.indexOf(target));
      if (seen === undefined) {
        state.set(target, 'visiting');
        path.push(target);
        next.push(0);
      }
    }
    return null;
  };

  for (const s of steps) {
    if (state.has(s.anchor)) continue;
    const cycle = visit(s.anchor);
    if (!cycle) continue;
    let start = 0;
    cycle.forEach((a, i) => {
      if ((order.get(a) ?? 0) < (order.get(cycle[start] ?? '') ?? 0)) start = i;
    });
    return [...cycle.slice(start), ...cycle.slice(0, start)];
  }
  return null;
}

/** Reads and parses a plan file; errors name `displayPath` (e.g. the repo-relative path). */
export function readPlanFile(absPath: string, displayPath: string): Plan {
  return parsePlanBytes(readPlanBytes(absPath, displayPath), displayPath);
}

/** The plan file's bytes, unparsed; a file that cannot be read is a PlanError naming it. */
export function readPlanBytes(absPath: string, displayPath: string): Buffer {
  try {
    return readFileSync(absPath);
  } catch (err) {
    throw planReadError(displayPath, err);
  }
}

/** The PlanError for a plan file that cannot be read (or stat'ed), naming `displayPath`. */
export function planReadError(displayPath: string, err: unknown): PlanError {
  return new PlanError(displayPath, 0, `cannot read plan: ${readFailureReason(err)}`);
}

/** Parses a plan file's bytes: UTF-8 (a leading BOM is dropped), else a PlanError naming the line. */
export function parsePlanBytes(bytes: Buffer, displayPath: string): Plan {
  if (!isUtf8(bytes)) throw new PlanError(displayPath, firstBadUtf8Line(bytes), 'not valid UTF-8');
  const text = bytes.toString('utf8');
  return parsePlan(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text, displayPath);
}

/** The 1-based line (split as splitLines does: \r\n, \n or \r) holding the first byte that is not UTF-8. */
export function firstBadUtf8Line(bytes: Buffer): number {
  let line = 1;
  let start = 0;
  for (let i = 0; i <= bytes.length; i++) {
    const b = bytes[i];
    if (i < bytes.length && b !== 0x0a && b !== 0x0d) continue;
    if (!isUtf8(bytes.subarray(start, i))) return line;
    if (b === 0x0d && bytes[i + 1] === 0x0a) i++;
    line++;
    start = i + 1;
  }
  return line;
}

function readFailureReason(err: unknown): string {
  const code = err instanceof Error && 'code' in err ? String(err.code) : '';
  switch (code) {
    case 'ENOENT':
      return 'no such file';
    case 'EISDIR':
      return 'is a directory';
    case 'EACCES':
    case 'EPERM':
      return 'permission denied';
    default:
      return messageOf(err);
  }
}
