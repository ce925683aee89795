/** The parsed shape of a plan file (docs/plan-grammar.md). */
export type ItemKind = 'task' | 'test' | 'checkpoint';

export const ITEM_KINDS: readonly ItemKind[] = ['task', 'test', 'checkpoint'];

export interface PlanItem {
  readonly kind: ItemKind;
  /** Position within its kind group for this step, 0-based. */
  readonly ordinal: number;
  readonly text: string;
  /** `- [x]` in the file; informational only, never part of the structural hash. */
  readonly checked: boolean;
  readonly line: number;
}

export interface PlanStep {
  readonly anchor: string;
  readonly parentAnchor: string | null;
  /** "1" for a step, "1.1" for a substep, as written in the heading. */
  readonly number: string;
  readonly title: string;
  /** Interleaved declaration order, 0-based: step-1, step-1-1, step-1-2, step-2, … */
  readonly stepIndex: number;
  readonly dependsOn: readonly string[];
  /**
   * The files the step will touch, as repository-relative globs (`src/auth/**`), from its
   * `**Files:**` line; empty when it names none (docs/plan-grammar.md, "Files").
   */
  readonly files: readonly string[];
  readonly items: readonly PlanItem[];
  readonly line: number;
}

export interface Plan {
  readonly title: string;
  readonly steps: readonly PlanStep[];
  /** Free prose sections of the plan keyed by heading (e.g. "Approach", "Constraints"), trimmed. */
  readonly sections: Readonly<Record<string, string>>;
}

/**
 * A plan as a command found it, with where it is keyed in the store. Reading is explicit: a source
 * on a file is stat'ed when made and read only by a call (`plan()`, `bytes()`, `file.readIfChanged`),
 * once, so a checking command whose file the store has seen unchanged reads nothing (docs/cli-cost.md).
 */
export interface PlanSource {
  /** Repository-relative path with forward slashes: the key every worktree shares. */
  readonly planPath: string;
  /** The plan, parsed: the file read and parsed on the first call (a malformed plan throws there), the same plan after. */
  plan(): Plan;
  /**
   * The file's bytes (read on the first call), when known: a store that recorded these exact bytes
   * with the plan's structure skips the parse and the structure comparison (docs/cli-cost.md).
   */
  bytes(): Uint8Array | undefined;
  /** The file as the command found it, for a store that remembers the stat its bytes last matched under. */
  readonly file?: PlanFile;
}

/** A plan file's place and stat, as `PlanSource.file`. */
export interface PlanFile {
  /** The absolute path it is read from. */
  readonly path: string;
  /** Device, inode, size, modification and change times (ns), taken before its bytes are read. */
  readonly stat: string;
  /**
   * Nothing, and nothing read, when `recorded` (the stat under which the store last saw the file's
   * bytes match) is `stat`; else the file read (its bytes are then the source's `bytes()`), with the
   * stat under which they are known to be the file's, or undefined when it was changed too recently
   * to trust its times (docs/cli-cost.md, "Unchanged plan files").
   */
  readIfChanged(recorded: string | undefined): { readonly settledStat: string | undefined } | undefined;
}
