import { existsSync } from 'node:fs';
import {
  appRunning,
  appUrl,
  configPathFor,
  displayCommand,
  forgetApp,
  loadRoleCommands,
  RefusedError,
  recordApp,
  requireAllowed,
  runningApp,
  startGroup,
  stopApp,
  trustTargetFor,
  UsageError,
  worktreeCommandEnv,
  worktreeFacts,
  type GroupEnd,
  type OutputSink,
  type RunningGroup,
} from '../../core/index.ts';
import { flag } from '../args.ts';
import { arg, EPIC_ARG, type Command } from '../command.ts';
import { output } from '../output.ts';
import { planningStore } from '../planning.ts';

const STOP_SIGNALS: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

export const appCommand: Command = {
  name: 'app',
  summary:
    'start an epic\'s app in its worktree (the "run" commands of config.json) on the worktree\'s ports; --stop stops it',
  positionals: [EPIC_ARG],
  options: [{ name: 'stop', type: 'boolean', description: "stop the epic's app started by another springfield app" }],
  details: [
    'The "run" commands of .springfield/config.json (argument arrays, e.g. "run": [["npm", "run", "dev"]]) start in the',
    "epic's own worktree, with SPRINGFIELD_PORT (the first of the worktree's ports), SPRINGFIELD_PORTS (first-last), the",
    'epic\'s SPRINGFIELD_ variables and the "env" map of config.json. They run until Ctrl+C, until one of them ends, or',
    'until the worktree is removed (the epic merged, worktrees prune): each in its own process group, ended as a whole.',
    'One app per epic: a second start is refused while one runs. See docs/worktrees.md, "Running an epic\'s app".',
  ].join('\n'),
  async run(ctx) {
    const epicId = arg(ctx, 0);
    const config = loadRoleCommands(configPathFor(ctx.stateFile));
    const stop = flag(ctx.args, 'stop');
    const store = planningStore(ctx, stop ? 'read' : 'write');
    const epic = await store.getEpic(epicId);
    const mainRoot = ctx.location.mainRoot;
    const worktree = epic.worktree_path;
    if (!worktree || worktree === mainRoot) {
      throw new RefusedError(
        'no_epic_worktree',
        `${epic.id} has no worktree of its own yet: it gets one when the scheduler starts it (springfield orchestrate)`,
      );
    }
    if (!existsSync(worktree))
      throw new RefusedError('no_epic_worktree', `${epic.id}'s worktree ${worktree} is gone; nothing to run there`);
    if (stop) {
      const stopped = await stopApp(worktree, config.killGraceSeconds * 1000);
      return output(
        { epic: epic.id, stopped: stopped !== null, pid: stopped?.pid ?? null },
        stopped ? `Stopped ${epic.id}'s app (pid ${stopped.pid}).` : `${epic.id} has no app running.`,
      );
    }
    if (config.run.length === 0) {
      throw new UsageError(
        'no_run_command',
        `${configPathFor(ctx.stateFile)}: no "run" commands: add e.g. "run": [["npm", "run", "dev"]] (docs/worktrees.md)`,
      );
    }
    // The run commands come from config.json: they run only once you allowed it (docs/trust.md).
    requireAllowed(trustTargetFor(ctx.location, ctx.stateFile, ctx.env));
    const running = runningApp(worktree);
    if (running) throw appRunning(epic.id, running);

    const facts = await worktreeFacts(store, { epic, worktree, mainRoot: mainRoot ?? worktree, config, env: ctx.env });
    const env = worktreeCommandEnv(ctx.env, facts);
    const port = facts.ports?.first ?? null;
    const url = appUrl(port);
    const record = {
      epic_id: epic.id,
      worktree,
      pid: process.pid,
      groups: [] as number[],
      port,
      url,
      started_at: new Date().toISOString(),
    };
    recordApp(record);
    const json = flag(ctx.args, 'json');
    const shown = json ? process.stderr : process.stdout;
    const ports = facts.ports ? ` (ports ${facts.ports.first}-${facts.ports.first + facts.ports.count - 1})` : '';
    process.stderr.write(
      `${epic.id}'s app${epic.title ? ` (${epic.title})` : ''} in ${worktree}${url ? ` at ${url}` : ''}${ports}; Ctrl+C stops it\n`,
    );

    const groups: RunningGroup[] = config.run.map((command, i) => {
      const prefix = config.run.length > 1 ? `[${i + 1}] ` : '';
      return startGroup(command, {
        cwd: worktree,
        env,
        timeoutMs: 0,
        graceMs: config.killGraceSeconds * 1000,
        stdin: 'ignore',
        stdout: prefixed(shown, prefix),
        stderr: prefixed(process.stderr, prefix),
      });
    });
    recordApp({ ...record, groups: groups.flatMap((g) => (g.pid === undefined ? [] : [g.pid])) });
    let stoppedBy: NodeJS.Signals | null = null;
    const onSignal = (signal: NodeJS.Signals): void => {
      stoppedBy = signal;
      for (const g of groups) g.stop('SIGTERM');
    };
    for (const s of STOP_SIGNALS) process.on(s, onSignal);
    let first: { index: number; end: GroupEnd } | null = null;
    // The app is its commands together: the first that ends ends the others.
    const ends = await Promise.all(
      groups.map((g, index) =>
        g.done.then((end) => {
          if (first === null) {
            first = { index, end };
            for (const other of groups) if (other !== g) other.stop('SIGTERM');
          }
          return end;
        }),
      ),
    );
    for (const s of STOP_SIGNALS) process.off(s, onSignal);
    forgetApp(worktree, process.pid);
    const ended = first as { index: number; end: GroupEnd } | null;
    const exitCode = stoppedBy !== null ? 0 : (ended?.end.exitCode ?? 0);
    const which = ended ? (config.run[ended.index] ?? []) : [];
    const how =
      stoppedBy !== null
        ? `stopped (${stoppedBy})`
        : `\`${displayCommand(which)}\` ended with exit ${ended?.end.exitCode ?? 0}`;
    return output(
      {
        epic: epic.id,
        worktree,
        port,
        url,
        ports: facts.ports ? { first: facts.ports.first, count: facts.ports.count } : null,
        commands: config.run,
        exit_codes: ends.map((e) => e.exitCode),
        stopped_by: stoppedBy,
      },
      `${epic.id}'s app ${how}.`,
      exitCode,
    );
  },
};

/** Output with `prefix` before each line (several commands share one terminal). */
function prefixed(sink: OutputSink, prefix: string): OutputSink {
  if (prefix === '') return sink;
  let atStart = true;
  return {
    write(chunk: Buffer | string): unknown {
      const text = chunk.toString();
      let out = '';
      for (const ch of text) {
        if (atStart) out += prefix;
        out += ch;
        atStart = ch === '\n';
      }
      return sink.write(out);
    },
  };
}
