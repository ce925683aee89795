import type { Command } from '../command.ts';

/** Commands that touch git: commit, reconcile, doctor, prune. */
export const GIT_COMMANDS: readonly Command[] = [];
