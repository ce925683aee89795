/**
 * The step commands, the one list of their names: the launcher routes them to the entry bundle and
 * keys a code cache by each (launcher.ts), commands/modules.ts links in a definition for each (its type
 * requires exactly these), and the tests walk it.
 */
export const STEP_COMMANDS = [
  'init',
  'claim',
  'start',
  'heartbeat',
  'update',
  'artifact',
  'complete',
  'reset',
  'ready',
  'show',
  'events',
] as const;

export type StepCommandName = (typeof STEP_COMMANDS)[number];

/** Whether `word` names a step command. */
export function isStepCommand(word: string): word is StepCommandName {
  return (STEP_COMMANDS as readonly string[]).includes(word);
}
