/**
 * Waves: which of the epics under way whose files meet goes first (docs/files.md, "Scheduling").
 * An epic takes the lowest wave that no epic it meets holds, and a later one than any epic it meets
 * that has changed, or is building, a file it touches. Once given, a wave is kept while the epic is
 * under way, so two epics never trade places. A chain (a meets b, b meets c) takes two waves, a and
 * c first, b after both: c never waits behind b waiting behind a. Pure.
 */
import { sharedFile } from './fileGlobs.ts';
import type { EpicFiles, EpicSnapshot } from './types.ts';

/** Every file the epic's work touches: its unfinished steps' and what its branch changed. */
function touched(files: EpicFiles): string[] {
  return [...Object.values(files.openSteps).flat(), ...files.changed];
}

/** Of two epics, the one first by priority (P0 first), then age, then id: the order new epics take their waves in. */
export function byAge(a: EpicSnapshot, b: EpicSnapshot): number {
  if (a.priority !== b.priority) return a.priority < b.priority ? -1 : 1;
  const ca = a.files?.createdAt ?? '';
  const cb = b.files?.createdAt ?? '';
  if (ca !== cb) return ca < cb ? -1 : 1;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/**
 * The wave of each epic with files: `kept` (the last pass's) for those that have one, a new one for
 * the rest. `busy` are the steps being built now (busySteps).
 */
export function assignWaves(
  epics: readonly EpicSnapshot[],
  kept: ReadonlyMap<string, number>,
  busy: readonly { readonly epicId: string; readonly files: readonly string[] }[],
): Map<string, number> {
  const withFiles = epics.filter((e): e is EpicSnapshot & { files: EpicFiles } => e.files !== undefined);
  const waves = new Map<string, number>();
  for (const e of withFiles) {
    const wave = kept.get(e.id);
    if (wave !== undefined) waves.set(e.id, wave);
  }
  // Those with work on their branch first (after a restart, the one that built a shared file still
  // goes first), then by age.
  const worked = (e: EpicSnapshot & { files: EpicFiles }) => (e.files.changed.length > 0 ? 0 : 1);
  for (const epic of [...withFiles].sort((a, b) => worked(a) - worked(b) || byAge(a, b))) {
    if (waves.has(epic.id)) continue;
    const mine = touched(epic.files);
    const taken = new Set<number>();
    let above = 0;
    for (const other of withFiles) {
      const wave = waves.get(other.id);
      if (wave === undefined || sharedFile(mine, touched(other.files)) === null) continue;
      taken.add(wave);
      const building = busy.filter((b) => b.epicId === other.id).flatMap((b) => b.files);
      if (sharedFile(mine, [...other.files.changed, ...building]) !== null) above = Math.max(above, wave + 1);
    }
    let wave = above;
    while (taken.has(wave)) wave += 1;
    waves.set(epic.id, wave);
  }
  return waves;
}
