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

/** Commands every agent calls often, loaded with the CLI. */
const EAGER: readonly Command[] = [
  initCommand, claimCommand, startCommand, heartbeatCommand, updateCommand, artifactCommand, completeCommand,
  resetCommand, readyCommand, showCommand, eventsCommand, ...EPIC_COMMANDS, ...GIT_COMMANDS,
];

/** Commands that pull in heavy libraries (zod, simple-git): loaded only when named, so claim and show start fast. */
const LAZY: Readonly<Record<string, () => Promise<readonly Command[]>>> = {
  run: async () => (await import('./runCommands.ts')).RUN_COMMANDS,
  runs: async () => (await import('./runCommands.ts')).RUN_COMMANDS,
  orchestrate: async () => [(await import('./orchestrate.ts')).orchestrateCommand],
};

/** The commands that could match `word` (the eager ones, plus a lazy module when it names one). */
export async function commandsFor(word: string | undefined): Promise<readonly Command[]> {
  const load = word !== undefined && Object.hasOwn(LAZY, word) ? LAZY[word] : undefined;
  return load ? [...EAGER, ...(await load())] : EAGER;
}

/** Every command, in the order `springfield --help` lists them. */
export async function allCommands(): Promise<readonly Command[]> {
  const lazy = [...(await (LAZY.run as () => Promise<readonly Command[]>)()), ...(await (LAZY.orchestrate as () => Promise<readonly Command[]>)())];
  return [...EAGER, ...lazy];
}
