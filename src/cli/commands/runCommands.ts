import type { Command } from '../command.ts';
import { runCommand } from './run.ts';
import { runsCommand } from './runs.ts';

/** Agent runs: `run -- <cmd…>` and `runs` (issue: agent runs and session accounting). */
export const RUN_COMMANDS: readonly Command[] = [runCommand, runsCommand];
