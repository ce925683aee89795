import { openStore } from '../core/index.ts';
import { COMMAND_MODULES } from './commands/index.ts';
import { dispatch, type Io } from './dispatch.ts';

export type { Io } from './dispatch.ts';

/** The whole CLI: every command, each module loaded when named. */
export function runCli(argv: readonly string[], io: Io): Promise<number> {
  return dispatch(argv, io, COMMAND_MODULES, openStore);
}
