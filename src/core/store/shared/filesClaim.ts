/**
 * The files rule of claims (docs/files.md, "Claims by agents themselves"): a ready step whose declared
 * files overlap those of a step another holder has claimed or started, under a live lease, in any plan
 * of the repository, is passed over by claim and listed by ready as waiting, with what it shares. A
 * step that declares no files is never held back and holds nothing back. Once for both backends.
 */
import { sharedFile } from '../../scheduler/fileGlobs.ts';
import type { Actor, FilesWait } from '../types.ts';
import type { Io } from './op.ts';
import type { StepRow } from './rows.ts';

/** A top-level step claimed or in progress under a live lease that declares files. */
export interface HeldFiles {
  readonly plan_path: string;
  readonly anchor: string;
  /** The JSON array of its globs (steps.files). */
  readonly files: string;
  readonly claimed_by: string | null;
  readonly claimed_host?: string | null;
  readonly epic_id: string | null;
}

export interface FilesClaimPort {
  /** Every top-level step of the repository claimed or in progress whose lease runs past now and that declares files (a partial index). */
  heldFiles(): Io<HeldFiles[]>;
  /** The plan's top-level steps that declare files, with their JSON globs (a partial index: nothing read for a plan without any). */
  planFiles(planPath: string): Io<{ anchor: string; files: string }[]>;
  /**
   * The plan's claimable top-level steps in step order (pending without blockers, or an expired lease):
   * what claim tries after its first ready step is held back. PostgreSQL skips rows others have locked.
   */
  readyCandidates(planPath: string): Io<StepRow[]>;
  /**
   * Serialises claims of steps with files (PostgreSQL: a transaction lock of the repository, so two
   * claimers never both read the other's files as free; SQLite: every write is BEGIN IMMEDIATE already).
   */
  lockFileClaims(): Io<void>;
}

/** The holders whose claims hold a step back: any but the claimer itself (its worktree and, on PostgreSQL, its host). */
export function othersHeld(held: readonly HeldFiles[], actor: Actor | null, host: string | null): HeldFiles[] {
  if (!actor) return [...held];
  return held.filter((h) => !(h.claimed_by === actor.worktree && (h.claimed_host ?? null) === host));
}

function globsOf(json: string): string[] {
  try {
    const list: unknown = JSON.parse(json);
    return Array.isArray(list) ? list.filter((g): g is string => typeof g === 'string') : [];
  } catch {
    return [];
  }
}

/** Why the step with these declared files (JSON) waits: the first held step it shares a file with, or null when it is free. */
export function filesWait(
  anchor: string,
  files: string | null | undefined,
  held: readonly HeldFiles[],
): FilesWait | null {
  if (!files || held.length === 0) return null;
  const mine = globsOf(files);
  for (const h of held) {
    const theirs = globsOf(h.files);
    const first = sharedFile(mine, theirs);
    if (first === null) continue;
    const shares = mine.filter((g) => sharedFile([g], theirs) !== null);
    const holder = h.claimed_by ?? 'someone';
    return {
      anchor,
      shares,
      with_plan: h.plan_path,
      with_step: h.anchor,
      with_epic: h.epic_id,
      with_holder: holder,
      message: `${anchor} shares ${shares.join(', ')} with ${h.epic_id ?? h.plan_path} ${h.anchor} (held by ${holder})`,
    };
  }
  return null;
}
