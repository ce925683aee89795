/** An epic id: `sf-` and 4 to 6 lower-case hex digits (`sf-a3f8`), as a pattern to embed in others. */
export const EPIC_ID_SOURCE = 'sf-[0-9a-f]{4,6}';

/** A whole string that is an epic id. */
export const EPIC_ID_PATTERN = new RegExp(`^${EPIC_ID_SOURCE}$`);

/** True when `s` has the shape of an epic id. */
export function isEpicId(s: string): boolean {
  return EPIC_ID_PATTERN.test(s);
}
