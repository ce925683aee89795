import type { Command } from '../command.ts';
import { artifactCommand } from './artifact.ts';
import { claimCommand } from './claim.ts';
import { completeCommand } from './complete.ts';
import { eventsCommand } from './events.ts';
import { heartbeatCommand } from './heartbeat.ts';
import { initCommand } from './init.ts';
import { readyCommand } from './ready.ts';
import { resetCommand } from './reset.ts';
import { showCommand } from './show.ts';
import { startCommand } from './start.ts';
import { updateCommand } from './update.ts';

/** A module of commands: the names it defines, in `--help` order, and how to load their definitions. */
export interface CommandModule {
  /** A test holds these to the definitions `load` returns. */
  readonly names: readonly string[];
  load(): Promise<readonly Command[]>;
}

/**
 * The step commands agents call many times a minute, linked into the CLI's entry bundle so they run
 * without loading anything else; every other command is loaded on demand (see index.ts).
 */
export const STEP_MODULES: readonly CommandModule[] = [
  { names: ['init'], load: async () => [initCommand] },
  { names: ['claim'], load: async () => [claimCommand] },
  { names: ['start'], load: async () => [startCommand] },
  { names: ['heartbeat'], load: async () => [heartbeatCommand] },
  { names: ['update'], load: async () => [updateCommand] },
  { names: ['artifact'], load: async () => [artifactCommand] },
  { names: ['complete'], load: async () => [completeCommand] },
  { names: ['reset'], load: async () => [resetCommand] },
  { names: ['ready'], load: async () => [readyCommand] },
  { names: ['show'], load: async () => [showCommand] },
  { names: ['events'], load: async () => [eventsCommand] },
];
