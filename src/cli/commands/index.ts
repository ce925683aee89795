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
import { EPIC_COMMANDS } from './epicCommands.ts';
import { GIT_COMMANDS } from './gitCommands.ts';
import { orchestrateCommand } from './orchestrate.ts';
import { RUN_COMMANDS } from './runCommands.ts';

/** Every command, in the order `springfield --help` lists them. */
export const COMMANDS: readonly Command[] = [
  initCommand, claimCommand, startCommand, heartbeatCommand, updateCommand, artifactCommand, completeCommand,
  resetCommand, readyCommand, showCommand, eventsCommand, ...EPIC_COMMANDS, ...GIT_COMMANDS, ...RUN_COMMANDS, orchestrateCommand,
];
