import type { StepStore, Store } from '../../core/index.ts';
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
import { STEP_COMMANDS, type StepCommandName } from '../fastPath/stepNames.ts';

/** A module of commands: the names it defines, in `--help` order, and how to load their definitions. */
export interface CommandModule<S extends StepStore = Store> {
  /** A test holds these to the definitions `load` returns. */
  readonly names: readonly string[];
  load(): Promise<readonly Command<S>[]>;
}

/** Each step command's definition, by name: the type requires one for every name in fastPath/stepNames.ts and no other. */
const STEP_DEFINITIONS: Readonly<Record<StepCommandName, Command<StepStore>>> = {
  init: initCommand,
  claim: claimCommand,
  start: startCommand,
  heartbeat: heartbeatCommand,
  update: updateCommand,
  artifact: artifactCommand,
  complete: completeCommand,
  reset: resetCommand,
  ready: readyCommand,
  show: showCommand,
  events: eventsCommand,
};

/**
 * The step commands agents call many times a minute, linked into the CLI's entry bundle so they run
 * without loading anything else; every other command is loaded on demand (see index.ts).
 */
export const STEP_MODULES: readonly CommandModule<StepStore>[] = STEP_COMMANDS.map((name) => ({
  names: [name],
  load: async () => [STEP_DEFINITIONS[name]],
}));
