/**
 * The step commands: the executable runs them from its entry bundle alone (modules.ts links them
 * in; a test holds the two lists together), and keeps a code cache for each (launcher.ts).
 */
export const STEP_COMMANDS: readonly string[] = ['init', 'claim', 'start', 'heartbeat', 'update', 'artifact', 'complete', 'reset', 'ready', 'show', 'events'];
