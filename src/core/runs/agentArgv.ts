/**
 * An agent command may name the run's values as `$SPRINGFIELD_CONTEXT_FILE` or
 * `${SPRINGFIELD_CONTEXT_FILE}` inside its arguments (prompts, `--message-file …`): they are
 * replaced textually from the agent's environment, one argument stays one argument, and nothing
 * goes through a shell. Other `$` text is left alone. See docs/agents.md.
 */
export function expandAgentArgv(argv: readonly string[], env: NodeJS.ProcessEnv): string[] {
  return argv.map((arg) =>
    arg.replace(
      /\$\{(SPRINGFIELD_[A-Z0-9_]+)\}|\$(SPRINGFIELD_[A-Z0-9_]+)/g,
      (whole, braced: string | undefined, bare: string | undefined) => {
        const value = env[(braced ?? bare) as string];
        return value === undefined ? whole : value;
      },
    ),
  );
}
