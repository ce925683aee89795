/** Epic ids (`sf-a3f8`) and priorities. Pure: the caller says which ids already exist. */
import { randomBytes } from 'node:crypto';
import { RefusedError, UsageError } from '../errors.ts';

export { isEpicId } from '../../shared/epicId.ts';
const MIN_HEX = 4;
const MAX_HEX = 6;
const TRIES_PER_LENGTH = 5;

/** A new `sf-` id of 4 hex chars, growing to 5 then 6 when `exists` reports collisions; throws if all fail. */
export function newEpicId(exists: (id: string) => boolean, random: (size: number) => Uint8Array = randomBytes): string {
  for (let length = MIN_HEX; length <= MAX_HEX; length++) {
    for (let attempt = 0; attempt < TRIES_PER_LENGTH; attempt++) {
      const hex = Buffer.from(random(Math.ceil(length / 2)))
        .toString('hex')
        .slice(0, length);
      const id = `sf-${hex}`;
      if (hex.length === length && !exists(id)) return id;
    }
  }
  throw new RefusedError(
    'epic_id_exhausted',
    `could not find a free epic id after ${TRIES_PER_LENGTH * (MAX_HEX - MIN_HEX + 1)} attempts`,
  );
}

export type Priority = 'P0' | 'P1' | 'P2' | 'P3';

export const PRIORITIES: readonly Priority[] = ['P0', 'P1', 'P2', 'P3'];

/** Parses P0–P3 (case-insensitive) to its upper-case form; refuses anything else with `invalid_priority`. */
export function parsePriority(text: string): Priority {
  const value = text.trim().toUpperCase();
  const found = PRIORITIES.find((p) => p === value);
  if (found) return found;
  throw new UsageError('invalid_priority', `invalid priority "${text}"; expected one of: ${PRIORITIES.join(', ')}`);
}
