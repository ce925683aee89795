import {
  type ErrorCategory,
  type ErrorCode,
  ERROR_CODES,
  type StepStore,
  SpringfieldError,
  UsageError,
} from '../core/index.ts';
import { parseArgs } from './args.ts';
import { GLOBAL_OPTIONS } from './command.ts';
import type { CommandModule } from './commands/modules.ts';
import type { Command } from './command.ts';
import { CliContext, type OpenStore } from './cliContext.ts';
import { commandHelp, groupHelp, mainHelp, VERSION } from './help.ts';
import { messageOf } from '../shared/errorMessage.ts';

/** Exit codes by category; every ErrorCode has exactly one category (ERROR_CODES, src/core/errors.ts). */
const EXIT = { refused: 1, usage: 2, environment: 3 } as const satisfies Record<ErrorCategory, number>;
const EXIT_INTERNAL = 70;

export interface Io {
  readonly cwd: string;
  readonly env: NodeJS.ProcessEnv;
  stdout(text: string): void;
  stderr(text: string): void;
}

/**
 * Runs one CLI invocation over the given command modules and returns its exit code; the only place
 * errors become exit codes. Only the module of the named command is loaded. `openStore` opens the
 * store the commands get (the step commands' bundle passes openStepStore: docs/cli-cost.md, "The step store").
 */
export async function dispatch<S extends StepStore>(
  argv: readonly string[],
  io: Io,
  modules: readonly CommandModule<S>[],
  openStore: OpenStore<S>,
): Promise<number> {
  // Only our own options count: everything after a bare `--` is an argument (or the agent command).
  const ours = argv.includes('--') ? argv.slice(0, argv.indexOf('--')) : argv;
  const json = ours.includes('--json');
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || (name === 'help' && rest.length === 0)) {
    io.stdout(mainHelp(await loadAll(modules)) + '\n');
    return name === undefined ? 2 : 0;
  }
  if (name === '--version' || name === '-V') {
    io.stdout(`${VERSION}\n`);
    return 0;
  }
  let ctx: CliContext<S> | undefined;
  try {
    const words = name === 'help' ? rest : [name, ...rest];
    const COMMANDS = await commandsFor(modules, words[0]);
    const group = COMMANDS.filter((c) => c.name.startsWith(`${words[0]} `));
    const command =
      COMMANDS.find((c) => c.name === `${words[0]} ${words[1]}`) ?? COMMANDS.find((c) => c.name === words[0]);
    const own = rest.includes('--') ? rest.slice(0, rest.indexOf('--')) : rest;
    const helpWanted = name === 'help' || own.includes('--help') || own.includes('-h');
    if (!command && group.length > 0 && (helpWanted || words[1] === undefined || words[1].startsWith('-'))) {
      io.stdout(groupHelp(words[0] as string, group) + '\n');
      return helpWanted ? 0 : 2;
    }
    if (!command) {
      const what = group.length > 0 ? `${words[0]} ${words[1]}` : words[0];
      throw new UsageError(
        'unknown_command',
        `unknown command '${what}' (see 'springfield ${group.length > 0 ? `${words[0]} ` : ''}--help')`,
      );
    }
    if (helpWanted) {
      io.stdout(commandHelp(command) + '\n');
      return 0;
    }
    const argv = words.slice(command.name.split(' ').length);
    const args = parseArgs(
      command.name,
      argv,
      [...command.options, ...GLOBAL_OPTIONS],
      command.positionals,
      command.trailingCommand,
    );
    ctx = new CliContext(io.cwd, io.env, args, openStore, io.stderr);
    const result = await command.run(ctx);
    for (const w of [...ctx.warnings, ...(result.warnings ?? [])]) io.stderr(`springfield: warning: ${w}\n`);
    // The newline written on its own: appended, it would make V8 copy a large document (ready on a big plan)
    // into one flat string before writing it (docs/cli-cost.md, "The young generation").
    io.stdout(json ? JSON.stringify(result.json, null, 2) : result.text);
    io.stdout('\n');
    return result.exitCode ?? 0;
  } catch (err) {
    for (const w of ctx?.warnings ?? []) io.stderr(`springfield: warning: ${w}\n`);
    return reportError(err, json, io);
  } finally {
    ctx?.close();
  }
}

function reportError(err: unknown, json: boolean, io: Io): number {
  const known = err instanceof SpringfieldError;
  const code = known ? err.code : 'internal_error';
  const message = known ? err.message : `internal error: ${messageOf(err)}`;
  io.stderr(`springfield: ${message.replace(/\s*\n\s*/g, ' ')}\n`);
  if (!known && io.env.SPRINGFIELD_DEBUG && err instanceof Error && err.stack) io.stderr(err.stack + '\n');
  if (json) io.stdout(JSON.stringify({ error: { code, message } }) + '\n');
  return known ? exitCodeOf(err.code) : EXIT_INTERNAL;
}

/** The exit code an error with `code` ends the CLI with (docs/cli-contract.md, "Exit codes"). */
export function exitCodeOf(code: ErrorCode): number {
  return EXIT[ERROR_CODES[code]];
}

/** The commands that could match `word`: the one it names, or the members of the group it names. */
export async function commandsFor<S extends StepStore>(
  modules: readonly CommandModule<S>[],
  word: string | undefined,
): Promise<readonly Command<S>[]> {
  if (word === undefined) return [];
  return loadAll(modules.filter((m) => m.names.some((n) => n === word || n.startsWith(`${word} `))));
}

/** Every command of `modules`, in order. */
export async function loadAll<S extends StepStore>(
  modules: readonly CommandModule<S>[],
): Promise<readonly Command<S>[]> {
  return (await Promise.all(modules.map((m) => m.load()))).flat();
}
