/**
 * The role registry's lists as SQL, for the store's statements on either backend: which runs are an
 * epic's sessions, whose runs are builds and reviews, the scheduler's setup. Written from
 * src/shared/roles.ts, so a role added there is counted in the store's SQL without editing it.
 */
import { BUILDING_ROLE, REVIEWING_ROLE, SESSION_ROLES, SETUP_ROLE } from '../../../shared/roles.ts';

/** A role id as an SQL string literal; the registry's ids are plain lower-case words, never input (checked). */
function roleLiteral(role: string): string {
  if (!/^[a-z][a-z0-9_]*$/.test(role)) throw new Error(`role id ${JSON.stringify(role)} is not a plain word`);
  return `'${role}'`;
}

/** `IN (…)`'s list of the roles whose runs count as an epic's agent sessions. */
export const SESSION_ROLES_SQL = SESSION_ROLES.map(roleLiteral).join(', ');
/** The builder's role (its runs are builds; it claims steps). */
export const BUILDING_ROLE_SQL = roleLiteral(BUILDING_ROLE);
/** The reviewer's role (its runs end a review iteration). */
export const REVIEWING_ROLE_SQL = roleLiteral(REVIEWING_ROLE);
/** The scheduler's worktree setup. */
export const SETUP_ROLE_SQL = roleLiteral(SETUP_ROLE);
