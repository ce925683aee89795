// The CLI run in the test process: `dispatch` (src/cli/dispatch.ts) over a real store and a captured
// Io, routed as the launcher routes it (src/cli/launcher.ts): a step command through the step modules
// and the step store, any other through the whole CLI; the commands that use their process's own
// streams (OWN_STREAMS) run as the built binary. Use it for what a command does; spawn the binary
// (gitRepo.ts's runCli) for what only a process shows: exit codes as a process, signals, start-up,
// the step bundle and its node:sqlite driver, the installed package, concurrent processes.
//
// Nothing process-wide is changed: the working directory and the environment reach the command only
// through the Io (cwd, env = cleanEnv(overrides), as a spawned run gets them), output is captured, and
// the exit code is returned, never set on `process`. Step commands open the database through
// better-sqlite3 here, never node:sqlite: the test process opens the same files through better-sqlite3
// (test/helpers/sqlite.ts), and two SQLite libraries in one process must never hold one file
// (docs/architecture.md, "Two SQLite drivers"); test/unit/builtinSqlite.test.ts holds the drivers equal.
import type { PlanView, StepView } from '../../src/core/store/types.ts';
import { openStepStore } from '../../src/core/index.ts';
import { dispatch, type Io } from '../../src/cli/dispatch.ts';
import { runCli as runWholeCli } from '../../src/cli/main.ts';
import { STEP_MODULES } from '../../src/cli/commands/modules.ts';
import { isStepCommand } from '../../src/cli/fastPath/stepNames.ts';
import { messageOf } from '../../src/shared/errorMessage.ts';
import { assertOk, cleanEnv, cliResult, ensureCli, runCliAsync, type CliResult } from './gitRepo.ts';

/** Commands that use their process's own stdout, stderr or stdin (a supervised agent, the scheduler's agents, a server, migrate's progress): run as a process. */
export const OWN_STREAMS: ReadonlySet<string> = new Set(['run', 'orchestrate', 'app', 'mcp', 'migrate']);
let built = false;

/** Runs one CLI invocation in this process in `cwd`; `env` entries override (undefined removes), as gitRepo's runCli. */
export async function runCli(
  cwd: string,
  args: readonly string[],
  env: Readonly<Record<string, string | undefined>> = {},
): Promise<CliResult> {
  if (OWN_STREAMS.has(args[0] ?? '')) {
    if (!built) ensureCli();
    built = true;
    return runCliAsync(cwd, args, env);
  }
  const r = await dispatchHere(cwd, args, cleanEnv(env));
  return cliResult(r.code, r.stdout, r.stderr);
}

/** What one invocation printed and its exit code. */
export interface Ran {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs one invocation (not one of OWN_STREAMS) in this process in `cwd` with exactly `env`. */
export async function dispatchHere(cwd: string, args: readonly string[], env: NodeJS.ProcessEnv): Promise<Ran> {
  let stdout = '';
  let stderr = '';
  const io: Io = {
    cwd,
    env,
    stdout: (t) => {
      stdout += t;
    },
    stderr: (t) => {
      stderr += t;
    },
  };
  let code: number;
  try {
    code = await (isStepCommand(args[0] ?? '')
      ? dispatch(args, io, STEP_MODULES, (settings) => openStepStore(settings))
      : runWholeCli(args, io));
  } catch (err) {
    // What the executable does with an error that escaped dispatch (src/cli/stdio.ts, exitWhenDone).
    stderr += `springfield: internal error: ${messageOf(err)}\n`;
    code = 70;
  }
  return { code, stdout, stderr };
}

/** `runCli` with `--json` appended. */
export function runJson(
  cwd: string,
  args: readonly string[],
  env: Readonly<Record<string, string | undefined>> = {},
): Promise<CliResult> {
  return runCli(cwd, [...args, '--json'], env);
}

/** Every step and substep of one plan, by anchor, from `show <plan> --json` run in `cwd`. */
export async function showSteps(
  cwd: string,
  planPath: string,
  env: Readonly<Record<string, string | undefined>> = {},
): Promise<Map<string, StepView>> {
  const { plans } = assertOk<{ plans: PlanView[] }>(await runJson(cwd, ['show', planPath], env));
  const out = new Map<string, StepView>();
  for (const s of plans[0]?.steps ?? []) {
    out.set(s.anchor, s);
    for (const sub of s.substeps) out.set(sub.anchor, sub);
  }
  return out;
}
