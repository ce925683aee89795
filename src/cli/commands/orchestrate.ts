import { realpathSync } from 'node:fs';
import { dirname, join } from 'node:path';
import {
  type Action,
  configPathFor,
  dryRun,
  loadRoleCommands,
  Orchestrator,
  ProcessLauncher,
  requireAllowed,
  trustTargetFor,
  UsageError,
} from '../../core/index.ts';
import { flag, int, str } from '../args.ts';
import type { Command } from '../command.ts';
import { output, type CommandOutput } from '../output.ts';
import { planningStore } from '../planning.ts';

export const orchestrateCommand: Command = {
  name: 'orchestrate',
  summary: 'run the scheduler without an editor: start epics, agents, verification, reviews and merges',
  positionals: [],
  options: [
    {
      name: 'dry-run',
      type: 'boolean',
      description:
        'print what one pass would do now (decide()), and change nothing: no agent, worktree, claim or write',
    },
    {
      name: 'once',
      type: 'boolean',
      description: 'one pass: take the actions, wait for the agents and work it started, exit (never loops)',
    },
    {
      name: 'watch',
      type: 'boolean',
      description:
        'keep going until interrupted (Ctrl+C stops the agents it started), waiting out backoffs and for people',
    },
    {
      name: 'interval',
      type: 'int',
      placeholder: 'SECONDS',
      description: 'seconds between passes with --watch (default 2)',
      min: 1,
      max: 3600,
    },
    {
      name: 'until-idle',
      type: 'boolean',
      description:
        "with --watch: exit once only waiting is left (a retry backoff, a person's decision), saying what for",
    },
    {
      name: 'worktrees',
      type: 'string',
      placeholder: 'DIR',
      description: 'where epic worktrees go (default: <repo>.springfield/)',
    },
  ],
  details: [
    'Agents, verification and limits come from .springfield/config.json: { "roles": { "ralph": ["…"] }, "verification": [["npm","test"]], "maxParallelAgents": 3 }.',
    'Every agent is started through `springfield run`, never through a shell. Faults (docs/scheduler-faults.md): each run ends succeeded, failed,',
    'timed_out (per-role "timeouts": { "ralph": 3600 }), lost or no_progress; a failed role is retried after "retryBackoffSeconds" (default [15, 60, 240]),',
    'and after "retryLimit" (default 3) non-successes in a row the epic is blocked (agent_failed) until a person runs `springfield epic retry <epic>`.',
    'New worktrees get the ignored files .worktreeinclude lists and run "setup": [["npm", "ci"]] before any agent; "archive" runs before one is removed.',
  ].join('\n'),
  async run(ctx) {
    const once = flag(ctx.args, 'once');
    const watch = flag(ctx.args, 'watch');
    if (flag(ctx.args, 'dry-run')) {
      if (once || watch || flag(ctx.args, 'until-idle'))
        throw new UsageError(
          'bad_option',
          '--dry-run takes one look and changes nothing; it goes without --once, --watch and --until-idle',
        );
      return dryRunOutput(ctx);
    }
    if (once === watch)
      throw new UsageError('missing_option', 'orchestrate needs exactly one of --once, --watch or --dry-run');
    if (once && flag(ctx.args, 'until-idle'))
      throw new UsageError('bad_option', '--until-idle goes with --watch; --once already exits after one pass');
    requireAllowed(trustTargetFor(ctx.location, ctx.stateFile, ctx.env));
    const mainRoot = ctx.location.mainRoot;
    if (!mainRoot) throw new UsageError('no_worktree', 'orchestrate needs a repository with a main worktree');
    const store = planningStore(ctx, 'write');
    const config = loadRoleCommands(configPathFor(ctx.stateFile));
    const log = (line: string) => process.stderr.write(`${new Date().toISOString().slice(11, 19)} ${line}\n`);
    // The entry script that is running now (chunks live below it, so not this module's own path).
    const cli = [process.execPath, realpathSync(process.argv[1] ?? '')];
    const launcher = new ProcessLauncher(join(dirname(ctx.stateFile), 'logs'), log);
    const orchestrator = new Orchestrator({
      store,
      mainRoot,
      config,
      cli,
      launcher,
      log,
      worktreeLocation: str(ctx.args, 'worktrees') || undefined,
    });
    const taken: Action[] = [];
    if (once) {
      taken.push(...(await orchestrator.tick()));
      await orchestrator.settle();
    } else {
      const interval = (int(ctx.args, 'interval') ?? 2) * 1000;
      let stopping = false;
      const stop = () => {
        stopping = true;
        orchestrator.stopAll();
      };
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
      while (!stopping) {
        const actions = await orchestrator.tick();
        taken.push(...actions);
        // A pull request's state check is waiting for a person (to merge it), not work under way.
        // Work held by the machine or a slot (the fleet governor) is under way too: it starts once they free.
        const busy =
          actions.some((a) => a.kind !== 'check_pr') ||
          !orchestrator.idle ||
          orchestrator.waiting.some((w) => w.kind === 'machine' || w.kind === 'slot') ||
          (await store.runs({ active: true })).length > 0;
        if (flag(ctx.args, 'until-idle') && !busy) break;
        // Wake when an agent or a piece of work ends, at the end of the nearest backoff, or after the interval.
        const backoff = orchestrator.waiting
          .filter((w) => w.until !== null)
          .map((w) => Date.parse(w.until ?? '') - Date.now() + 50);
        const wait = actions.some((a) => a.kind !== 'check_pr') ? 50 : Math.max(50, Math.min(interval, ...backoff));
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([new Promise((r) => (timer = setTimeout(r, wait))), orchestrator.nextExit()]);
        // A timer left pending would keep the process alive up to an interval after --until-idle ends.
        clearTimeout(timer);
      }
      await orchestrator.settle();
    }
    const counts: Record<string, number> = {};
    for (const a of taken) counts[a.kind] = (counts[a.kind] ?? 0) + 1;
    const waiting = orchestrator.waiting;
    const unstaffed = orchestrator.unstaffed;
    const lines = [
      `Took ${taken.length} action${taken.length === 1 ? '' : 's'}: ${
        Object.entries(counts)
          .map(([k, n]) => `${n} ${k}`)
          .join(', ') || 'nothing to do'
      }`,
    ];
    if (waiting.length > 0) {
      lines.push('Waiting for:');
      for (const w of waiting)
        lines.push(`  ${w.epic_id}: ${w.kind === 'backoff' ? `until ${w.until?.slice(11, 19)} — ` : ''}${w.message}`);
    }
    if (unstaffed.length > 0) {
      lines.push('No agent configured (roles in .springfield/config.json, or springfield agents use <preset>):');
      for (const u of unstaffed) lines.push(`  ${u.epic_id}: ${u.message}`);
    }
    const parallel = orchestrator.parallel;
    if (parallel.auto) lines.push(`Agents at once: ${parallel.text}`);
    return output({ actions: taken, counts, waiting, unstaffed, parallel }, lines.join('\n'));
  },
};

/** `--dry-run`: the pass decide() would take, read from the store opened read-only; nothing runs, so no trust is asked. */
async function dryRunOutput(ctx: Parameters<Command['run']>[0]): Promise<CommandOutput> {
  const mainRoot = ctx.location.mainRoot;
  if (!mainRoot) throw new UsageError('no_worktree', 'orchestrate needs a repository with a main worktree');
  const r = await dryRun(planningStore(ctx, 'read'), mainRoot, loadRoleCommands(configPathFor(ctx.stateFile)));
  const lines = [
    r.actions.length === 0
      ? 'Dry run: a pass would do nothing now'
      : `Dry run: a pass would take ${r.actions.length} action${r.actions.length === 1 ? '' : 's'} (nothing was done):`,
  ];
  for (const a of r.actions) lines.push(`  ${a.description}`);
  for (const c of r.conflicts_ahead)
    lines.push(`  ${c.epic_id}: conflict ahead with ${c.with} in ${c.files.join(', ')}`);
  if (r.running > 0)
    lines.push(`${r.running} agent run${r.running === 1 ? ' is' : 's are'} under way (their epics wait for them)`);
  if (r.unstaffed.length > 0) {
    lines.push('No agent configured (roles in .springfield/config.json, or springfield agents use <preset>):');
    for (const u of r.unstaffed) lines.push(`  ${u.epic_id}: ${u.message}`);
  }
  return output(r, lines.join('\n'));
}
