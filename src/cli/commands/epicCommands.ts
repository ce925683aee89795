import type { Command } from '../command.ts';

/** Epics, plan approval, signals and context (issue: planning layer). */
export const EPIC_COMMANDS: readonly Command[] = [];
