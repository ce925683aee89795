import type { Command } from '../command.ts';
import { commitCommand } from './commit.ts';
import { doctorCommand } from './doctor.ts';
import { pruneCommand } from './prune.ts';
import { reconcileCommand } from './reconcile.ts';

/** Commands that touch git: commit, reconcile, doctor, prune. */
export const GIT_COMMANDS: readonly Command[] = [commitCommand, reconcileCommand, doctorCommand, pruneCommand];
