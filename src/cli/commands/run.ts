import { randomBytes } from 'node:crypto';
import { realpathSync } from 'node:fs';
import { basename, delimiter, dirname, join } from 'node:path';
import {
  addWorktreeVariables,
  worktreeFacts,
  AGENT_ROLES,
  agentError,
  agentOutputFormat,
  agentPlaceProblem,
  RefusedError,
  isDatabaseUrl,
  agentEnv,
  runsEditorRuntime,
  readUsage,
  usageSpecFor,
  type AgentRole,
  type AgentRunStart,
  configPathFor,
  contextDirFor,
  createExclusively,
  ensureContextDir,
  ensureGitignored,
  EnvironmentError,
  expandAgentArgv,
  type Head,
  isAncestor,
  loadRoleCommands,
  makeCliShim,
  pathWith,
  pidAlive,
  sweepCliShims,
  readHead,
  removeCliShim,
  requireAllowed,
  shortRef,
  presetFor,
  SpringfieldError,
  type Store,
  timeoutFor,
  trustTargetFor,
  UsageError,
  writeExclusive,
} from '../../core/index.ts';
import { flag, int, str } from '../args.ts';
import { LEASE_OPTION, type Command } from '../command.ts';
import type { CliContext } from '../cliContext.ts';
import { duration, output } from '../output.ts';
import { renderContext } from '../render/contextText.ts';
import { planningStore } from '../planning.ts';
import { contextForRole } from '../rolePromptText.ts';
import { supervise } from '../supervise.ts';
import { messageOf } from '../../shared/errorMessage.ts';

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
    'printed) and the last 40 lines are stored with the run. The run ends succeeded, failed (exit code), timed_out or no_progress (exit 0',
    'but a builder neither completed its step, committed nor ticked an item; a planner proposed nothing; a reviewer',
    'recorded no signal); a run that does not succeed releases its step at once (see docs/scheduler-faults.md).',
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
    const planArg = planFlag !== undefined ? ctx.planKey(planFlag) : undefined;
    const config = loadRoleCommands(configPathFor(ctx.stateFile));
    const leaseSeconds = int(ctx.args, 'lease') ?? config.leaseSeconds;
    const timeoutSeconds = int(ctx.args, 'timeout') ?? timeoutFor(config, role);
    const store = planningStore(ctx, 'write');
    const actor = ctx.actor;
    const stepAnchor = str(ctx.args, 'step') ?? null;
    const before = readHead(actor.worktree, ctx.env);
    const launchId = ctx.env.SPRINGFIELD_LAUNCH_ID || null;

    // Agents work only where the epic's work lives: never a person's checkout, never another branch (docs/lifecycle.md).
    const epic = await store.getEpic(epicId);
    const misplaced = agentPlaceProblem(role, epic, actor.worktree, ctx.location.mainRoot, ctx.env);
    if (misplaced) throw new RefusedError('outside_epic_worktree', `${misplaced}; nothing was started`);
    // Ports are reserved before the run is recorded: a reservation that fails (the range used up, the store
    // unreachable) refuses with nothing claimed and no run left to reap.
    const facts = await worktreeFacts(store, {
      epic,
      worktree: actor.worktree,
      mainRoot: ctx.location.mainRoot ?? actor.worktree,
      config,
      env: ctx.env,
    });
    const prepared = await store.beginAgentRun({
      role,
      epicId,
      planArg,
      stepAnchor,
      command,
      actor,
      leaseSeconds,
      headBefore: before?.commit ?? null,
      launchId,
      pid: process.pid,
    });
    const contextFile = await writeContextFile(ctx, store, prepared);
    const values = {
      epic: epicId,
      step: prepared.stepAnchor,
      plan: prepared.planPath,
      worktree: actor.worktree,
      claimToken: prepared.holder.token ?? null,
      contextFile,
      role,
      runId: prepared.run.id,
      agent: prepared.agent,
      db: ctx.dbPath,
    };
    const warnings: string[] = [];
    let heartbeats = prepared.stepAnchor === null ? 0 : 1;
    const timer =
      prepared.stepAnchor === null
        ? undefined
        : setInterval(
            () => {
              store
                .heartbeat(prepared.planPath ?? '', prepared.stepAnchor ?? '', prepared.holder, { leaseSeconds })
                .then(
                  () => {
                    heartbeats++;
                  },
                  (err: unknown) => {
                    warnings.push(`stopped renewing the lease on ${prepared.stepAnchor}: ${messageOf(err)}`);
                    clearInterval(timer);
                  },
                );
            },
            Math.max(100, (leaseSeconds * 1000) / 3),
          );
    timer?.unref();

    const started = Date.now();
    const env = agentEnv(ctx.env, values);
    delete env.SPRINGFIELD_LAUNCH_ID;
    delete env.SPRINGFIELD_CONFLICT;
    // The worktree's ports and the config's env map, as its setup and verification get them (docs/worktrees.md, "Ports").
    addWorktreeVariables(env, facts);
    if (runsEditorRuntime(command[0], process.execPath, process.versions.electron !== undefined))
      env.ELECTRON_RUN_AS_NODE = '1';
    // `springfield` on the agent's PATH: this same CLI, run by this same runtime (docs/agents.md).
    const shim = await cliShimFor(ctx, store, prepared.run.id, warnings);
    if (shim) env.PATH = pathWith(shim, env.PATH, delimiter);
    // A role whose config names how its agent reports usage has its stdout read for tokens and cost (docs/lifecycle.md).
    const usageSpec = usageSpecFor(config, role);
    const progressed = progressProbe(store, epicId, prepared.planPath);
    await progressed().catch(() => false); // the mark progress is measured from
    const stall =
      config.stallSeconds > 0
        ? { ms: config.stallSeconds * 1000, retryLines: presetFor(command)?.retryLines ?? [], progressed }
        : null;
    const ended = await supervise(
      expandAgentArgv(command, env),
      {
        cwd: actor.worktree,
        env,
        json: flag(ctx.args, 'json'),
        timeoutMs: timeoutSeconds * 1000,
        graceMs: config.killGraceSeconds * 1000,
        captureStdoutBytes: USAGE_CAPTURE_BYTES,
        captureStderrBytes: ERROR_CAPTURE_BYTES,
        stall,
        render: flag(ctx.args, 'raw') ? null : agentOutputFormat(presetFor(command)?.id),
      },
      (pid) => store.setAgentPid(prepared.run.id, pid),
    );
    clearInterval(timer);
    if (shim) removeCliShim(shim);
    const after = readHead(actor.worktree, ctx.env);
    // A person's main worktree may change branch while a planner works there; an epic's worktree may not.
    const spawnError = ended.spawnError ? describeSpawnError(command[0] ?? '', ended.spawnError) : null;
    const fault = spawnError ? null : prepared.ownWorktree ? branchFault(before, after) : null;
    const reopen =
      fault !== null &&
      before?.branch != null &&
      (await completedOffBranch(store, prepared, actor.worktree, before.branch, ctx.env));
    const usage = usageSpec ? readUsage(usageSpec, ended.stdout ?? '') : null;
    // The agent's own words for why it failed, where its CLI reports them (docs/scheduler-faults.md, "The headline").
    const said =
      ended.exitCode !== 0
        ? agentError(presetFor(command)?.errors ?? [], `${ended.stdout ?? ''}\n${ended.stderr ?? ''}`)
        : null;
    const run = await store.finishRun(
      prepared.run.id,
      {
        exitCode: ended.exitCode,
        signal: ended.signal,
        timedOut: ended.timedOut,
        outputTail: ended.tail,
        headAfter: after?.commit ?? null,
        fault,
        reopenStep: reopen,
        marks: prepared.marks,
        timeoutSeconds,
        usage,
        stopped: ended.stoppedBy ? stoppedReason(ended.stoppedBy) : null,
        stalled: ended.stalled,
        unavailable: spawnError?.message ?? null,
        agentError: said,
      },
      actor,
    );

    const where = `${role} on ${epicId}${prepared.stepAnchor ? ` ${prepared.stepAnchor}` : ''}`;
    if (spawnError)
      warnings.unshift(`${spawnError.message} (run ${run.id} recorded as ${run.status}, exit ${ended.exitCode})`);
    const how = ended.signal ? `killed by ${ended.signal}` : `exit ${ended.exitCode}`;
    const why = run.outcome_reason && !spawnError && run.outcome_reason !== how ? ` — ${run.outcome_reason}` : '';
    return output(
      {
        run,
        outcome: run.status,
        outcome_reason: run.outcome_reason,
        exit_code: ended.exitCode,
        signal: ended.signal,
        context_file: contextFile,
        lease_seconds: prepared.stepAnchor ? leaseSeconds : null,
        timeout_seconds: timeoutSeconds,
        heartbeats,
        spawn_error: spawnError,
      },
      `Run ${run.id} (${where}) ${run.status}: ${how} after ${duration(Date.now() - started)}${why}`,
      ended.exitCode,
      warnings,
    );
  },
};

/** Why a stopped run ended: someone sent its supervisor a signal before its timeout. */
function stoppedReason(signal: NodeJS.Signals): string {
  return `stopped by ${signal === 'SIGINT' ? 'Ctrl+C (SIGINT)' : signal} before its timeout: a person or the scheduler stopping ended it; nothing is counted against it`;
}

/**
 * Whether the store changed for the run's epic or plan since the last call: the stall watch's other
 * sign of life (an agent that ticks items quietly is working). The first call takes the mark.
 */
function progressProbe(store: Store, epicId: string, planPath: string | null): () => Promise<boolean> {
  let mark: string | null = null;
  return async () => {
    const newest = async (q: { epicId?: string; planPath?: string }) =>
      (await store.events({ ...q, limit: 1 })).at(-1)?.id ?? 0;
    const now = `${await newest({ epicId })}:${planPath ? await newest({ planPath }) : 0}`;
    const moved = mark !== null && now !== mark;
    mark = now;
    return moved;
  };
}

/** A run must leave the epic's worktree on the branch it found it on; anything else is a fault (docs/scheduler-faults.md). */
function branchFault(before: Head | null, after: Head | null): string | null {
  if (!before?.branch || !after) return null;
  if (after.branch === before.branch) return null;
  const now = after.branch ? `on ${shortRef(after.branch)}` : `detached at ${after.commit?.slice(0, 12) ?? '?'}`;
  return `left ${shortRef(before.branch)}: the worktree is now ${now} (the scheduler restores ${shortRef(before.branch)}; commits made there stay reachable)`;
}

/** Whether the run's step was completed by this run with a commit that is not on `branch`. */
async function completedOffBranch(
  store: Store,
  p: AgentRunStart,
  worktree: string,
  branch: string,
  env: NodeJS.ProcessEnv,
): Promise<boolean> {
  if (!p.planPath || !p.stepAnchor || p.holder.token == null) return false;
  const step = await store.stepRecord(p.planPath ?? '', p.stepAnchor ?? '');
  if (step.status !== 'completed' || step.completed_token !== p.holder.token) return false;
  return step.commit_hash === null || !isAncestor(worktree, step.commit_hash, branch, env);
}

function roleOf(given: string | undefined): AgentRole {
  if (given === undefined) throw new UsageError('missing_option', `run needs --role ${AGENT_ROLES.join('|')}`);
  const role = AGENT_ROLES.find((r) => r === given);
  if (!role) throw new UsageError('bad_option', `--role must be one of ${AGENT_ROLES.join(', ')}, got '${given}'`);
  return role;
}

/**
 * Writes the run's context as markdown: kept under the database folder (`context/<run-id>-<random>.md`,
 * the record of what the agent was told) and, when the agent works in another worktree, a copy of
 * the same name in that worktree's `.springfield-context/`, where the agent may read it
 * (contextDirFor; docs/agents.md). Both are created new, never through a link planted there. Returns
 * the agent's copy; a failure ends the run as failed.
 */
async function writeContextFile(ctx: CliContext, store: Store, p: AgentRunStart): Promise<string> {
  const kept = join(dirname(ctx.stateFile), 'context');
  const readable = contextDirFor(p.holder.worktree, ctx.location.mainRoot, ctx.stateFile);
  const file = join(readable, `${p.run.id}-….md`);
  try {
    // On PostgreSQL no database file makes the repository's .springfield/ folder: keep it out of git as one would.
    if (isDatabaseUrl(ctx.dbPath)) ctx.gitignoreAdded = ensureGitignored(ctx.location) || ctx.gitignoreAdded;
    const view = await store.context({
      epicId: p.run.epic_id ?? undefined,
      stepAnchor: p.stepAnchor ?? undefined,
      actor: p.holder,
      docsRoot: ctx.location.mainRoot ?? ctx.location.worktreeRoot,
      role: p.run.role,
      beforeRun: p.run.id,
    });
    // A merge conflict the scheduler gives Ralph comes first: it is this run's task (docs/files.md).
    const conflict = ctx.env.SPRINGFIELD_CONFLICT ? `${ctx.env.SPRINGFIELD_CONFLICT.trimEnd()}\n\n` : '';
    const text = conflict + contextForRole(ctx, p.run.role, view, p.planPath, renderContext(view)) + '\n';
    ensureContextDir(kept, ctx.location.commonDir);
    const record = writeExclusive(kept, String(p.run.id), '.md', text);
    if (readable === kept) return record;
    ensureContextDir(readable, ctx.location.commonDir);
    const copy = join(readable, basename(record));
    createExclusively(copy, text);
    return copy;
  } catch (err) {
    await store.finishRun(
      p.run.id,
      { exitCode: 1, signal: null, fault: `cannot write the run's context: ${messageOf(err)}` },
      p.holder,
    );
    if (err instanceof SpringfieldError) throw err;
    throw new EnvironmentError(
      'context_unwritable',
      `${file}: cannot write the run's context (${messageOf(err)}); run ${p.run.id} recorded as failed`,
    );
  }
}

/**
 * A fresh folder with a `springfield` command for this run, under the state folder's `bin/`; null
 * (with a warning) when it cannot be made: the agent then needs `springfield` on its own PATH.
 */
async function cliShimFor(ctx: CliContext, store: Store, runId: number, warnings: string[]): Promise<string | null> {
  try {
    const cli = [process.execPath, realpathSync(process.argv[1] ?? '')];
    const parent = join(dirname(ctx.stateFile), 'bin');
    // Folders of runs that ended without removing theirs (killed with SIGKILL) go first.
    const live = (await store.runs({ active: true, limit: 1000 }))
      .filter((r) => r.pid !== null && pidAlive(r.pid))
      .map((r) => r.id);
    sweepCliShims(parent, new Set([...live, runId]));
    return makeCliShim(
      parent,
      `${runId}-${randomBytes(4).toString('hex')}`,
      cli,
      process.versions.electron !== undefined,
    );
  } catch (err) {
    warnings.push(`could not put springfield on the agent's PATH: ${messageOf(err)}`);
    return null;
  }
}

/** How much of an agent's stdout is kept to read its usage and its error from (the reports come last). */
const USAGE_CAPTURE_BYTES = 8 * 1024 * 1024;
/** How much of its stderr is kept to read its error from. */
const ERROR_CAPTURE_BYTES = 256 * 1024;

function describeSpawnError(program: string, err: NodeJS.ErrnoException): { code: string; message: string } {
  if (err.code === 'ENOENT') return { code: 'command_not_found', message: `agent command not found: '${program}'` };
  if (err.code === 'EACCES')
    return { code: 'command_not_executable', message: `agent command is not executable: '${program}'` };
  return { code: 'spawn_failed', message: `cannot start agent command '${program}': ${err.message}` };
}
