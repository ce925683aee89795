import { realpathSync } from 'node:fs';
import { dirname, join } from 'node:path';
import {
  AGENT_ROLES,
  type AgentRole,
  configPathFor,
  limitHolds,
  loadRoleCommands,
  RefusedError,
  requireAllowed,
  runAgent,
  timeoutFor,
  trustTargetFor,
  UsageError,
} from '../../core/index.ts';
import { flag, int, str } from '../args.ts';
import { LEASE_OPTION, type Command } from '../command.ts';
import { duration, output } from '../output.ts';
import { planningStore } from '../planning.ts';
import { writeContextFile } from '../runContext.ts';

export const runCommand: Command = {
  name: 'run',
  summary:
    'run an agent for a role on an epic (and step): recorded in the store, lease heartbeated, values passed as SPRINGFIELD_* variables',
  positionals: [],
  trailingCommand: true,
  options: [
    { name: 'role', type: 'string', placeholder: 'ROLE', description: `the role: ${AGENT_ROLES.join('|')}` },
    { name: 'epic', type: 'string', placeholder: 'ID', description: 'the epic the agent works on' },
    {
      name: 'step',
      type: 'string',
      placeholder: 'ANCHOR',
      description: 'the step this worktree holds; its lease is renewed every lease/3 while the agent lives',
    },
    { name: 'plan', type: 'string', placeholder: 'PATH', description: "the plan file (default: the epic's plan)" },
    {
      ...LEASE_OPTION,
      description:
        'lease length in seconds renewed by each heartbeat (default: leaseSeconds of .springfield/config.json, else 7200)',
    },
    {
      name: 'raw',
      type: 'boolean',
      description:
        "show the agent's output exactly as it prints it (by default the JSON events of Claude Code, Codex and Copilot are shown readably)",
    },
    {
      name: 'ignore-limit',
      type: 'boolean',
      description:
        "start it even while its preset is limited on this host (by default it is held, as the scheduler's runs are)",
    },
    {
      name: 'timeout',
      type: 'int',
      placeholder: 'SECONDS',
      description:
        "end the agent's whole process group after this long (default: timeouts.<role>, else runTimeoutSeconds of .springfield/config.json, else 3600)",
      min: 1,
      max: 31_622_400,
    },
  ],
  details: [
    "The agent command follows a bare '--': springfield run --role ralph --epic sf-a3f8 --step step-1 -- claude -p '…'",
    '$SPRINGFIELD_CONTEXT_FILE (or ${SPRINGFIELD_…}) inside an argument is replaced by that value; no shell is involved.',
    'The agent command is run directly (no shell) in the worktree, with SPRINGFIELD_EPIC, _STEP, _PLAN, _WORKTREE,',
    '_CLAIM_TOKEN, _CONTEXT_FILE, _ROLE, _RUN_ID, _AGENT and _DB set and ELECTRON_RUN_AS_NODE and VSCODE_* removed; in a',
    'worktree Springfield made, its ports too (SPRINGFIELD_PORT, _PORTS) and the "env" map of config.json (docs/worktrees.md).',
    'The agent runs in its own process group: a timeout, Ctrl+C or a stop ends the whole group (SIGTERM, then SIGKILL',
    'after killGraceSeconds), and processes it leaves behind are ended when it exits. Its output passes through (the JSON',
    "events of a preset's CLI as readable lines: the commands it runs, what it says, what it cost; --raw shows them as",
    'printed) and the last 40 lines are stored with the run. The run ends succeeded, failed (exit code), timed_out, limited (its CLI met a usage limit: docs/agents.md) or no_progress (exit 0',
    'but a builder neither completed its step, committed nor ticked an item; a planner proposed nothing; a reviewer',
    'recorded no signal); a run that does not succeed releases its step at once (see docs/scheduler-faults.md).',
    'While the command\'s preset is limited on this host (docs/agents.md, "Usage limits") nothing starts: it says until when',
    'and exits 1 (preset_limited); after the reset it is the one probe, unless another run has it. --ignore-limit starts it anyway.',
    "Exits with the agent's exit code (128+N when killed by signal N; 127 when the command cannot be found).",
  ].join('\n'),
  async run(ctx) {
    const role = roleOf(str(ctx.args, 'role'));
    const epicId = str(ctx.args, 'epic');
    if (epicId === undefined)
      throw new UsageError('missing_option', "run needs --epic ID (see 'springfield run --help')");
    const command = ctx.args.rest;
    if (command.length === 0 || command[0] === '')
      throw new UsageError(
        'missing_command',
        "run needs the agent command after '--', e.g. springfield run --role ralph --epic sf-1234 -- claude -p '…'",
      );
    requireAllowed(trustTargetFor(ctx.location, ctx.stateFile, ctx.env));
    const planFlag = str(ctx.args, 'plan');
    const config = loadRoleCommands(configPathFor(ctx.stateFile));
    const leaseSeconds = int(ctx.args, 'lease') ?? config.leaseSeconds;
    const timeoutSeconds = int(ctx.args, 'timeout') ?? timeoutFor(config, role);
    // The scheduler's own launches passed its limit gate already (presetChoice.ts, routedCommand.ts).
    if (!ctx.env.SPRINGFIELD_LAUNCH_ID && !flag(ctx.args, 'ignore-limit')) {
      const held = limitHolds(ctx.env, command, (timeoutSeconds + config.killGraceSeconds + 60) * 1000);
      if (held)
        throw new RefusedError(
          'preset_limited',
          `${held} on this host: nothing started (springfield run --ignore-limit starts it anyway)`,
        );
    }
    const store = planningStore(ctx, 'write');
    const r = await runAgent({
      store,
      role,
      epicId,
      planArg: planFlag !== undefined ? ctx.planKey(planFlag) : undefined,
      stepAnchor: str(ctx.args, 'step') ?? null,
      command,
      actor: ctx.actor,
      config,
      leaseSeconds,
      timeoutSeconds,
      env: ctx.env,
      mainRoot: ctx.location.mainRoot,
      dbPath: ctx.dbPath,
      shim: {
        parent: join(dirname(ctx.stateFile), 'bin'),
        cli: () => [process.execPath, realpathSync(process.argv[1] ?? '')],
      },
      json: flag(ctx.args, 'json'),
      raw: flag(ctx.args, 'raw'),
      writeContext: (p) => writeContextFile(ctx, store, p),
    });
    const { run, ended, spawnError } = r;
    const where = `${role} on ${epicId}${r.prepared.stepAnchor ? ` ${r.prepared.stepAnchor}` : ''}`;
    const how = ended.signal ? `killed by ${ended.signal}` : `exit ${ended.exitCode}`;
    const why = run.outcome_reason && !spawnError && run.outcome_reason !== how ? ` — ${run.outcome_reason}` : '';
    return output(
      {
        run,
        outcome: run.status,
        outcome_reason: run.outcome_reason,
        exit_code: ended.exitCode,
        signal: ended.signal,
        context_file: r.contextFile,
        lease_seconds: r.prepared.stepAnchor ? leaseSeconds : null,
        timeout_seconds: timeoutSeconds,
        heartbeats: r.heartbeats,
        spawn_error: spawnError,
      },
      `Run ${run.id} (${where}) ${run.status}: ${how} after ${duration(Date.now() - r.startedAt)}${why}`,
      ended.exitCode,
      [...r.warnings],
    );
  },
};

function roleOf(given: string | undefined): AgentRole {
  if (given === undefined) throw new UsageError('missing_option', `run needs --role ${AGENT_ROLES.join('|')}`);
  const role = AGENT_ROLES.find((r) => r === given);
  if (!role) throw new UsageError('bad_option', `--role must be one of ${AGENT_ROLES.join(', ')}, got '${given}'`);
  return role;
}
