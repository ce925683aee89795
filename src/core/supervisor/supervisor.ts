import { delimiter } from 'node:path';
import { readHead } from '../git/head.ts';
import { agentPlaceProblem } from '../orchestrate/agentPlace.ts';
import { addWorktreeVariables } from '../orchestrate/worktreeEnv.ts';
import { worktreeFacts } from '../orchestrate/worktreePorts.ts';
import { RefusedError } from '../errors.ts';
import type { Actor, AgentRunStart, RunView, Store } from '../store/index.ts';
import { expandAgentArgv } from '../runs/agentArgv.ts';
import { agentEnv, runsEditorRuntime } from '../runs/agentEnv.ts';
import { agentError } from '../runs/agentErrors.ts';
import { agentOutputFormat } from '../runs/agentOutput.ts';
import { pathWith, removeCliShim } from '../runs/cliShim.ts';
import { presetFor } from '../runs/presets.ts';
import { type AgentRole, type RunConfig, usageSpecFor } from '../runs/runConfig.ts';
import {
  branchFault,
  cliShimFor,
  completedOffBranch,
  describeSpawnError,
  progressProbe,
  stoppedReason,
} from './runEnd.ts';
import { supervise, type Supervised } from '../runs/supervise.ts';
import { readUsage } from '../runs/usage.ts';
import { startHeartbeat } from './heartbeat.ts';
import { limitOfRun, settleRunLimit } from '../limits/runLimit.ts';

/** One agent run as `springfield run` asks for it (docs/architecture.md, "The layers"). */
export interface AgentRunRequest {
  readonly store: Store;
  readonly role: AgentRole;
  readonly epicId: string;
  /** The plan named on the command line, else the epic's. */
  readonly planArg: string | undefined;
  readonly stepAnchor: string | null;
  /** The agent's argv (never shell text). */
  readonly command: readonly string[];
  readonly actor: Actor;
  readonly config: RunConfig;
  readonly leaseSeconds: number;
  readonly timeoutSeconds: number;
  /** The environment the agent's is built from. */
  readonly env: NodeJS.ProcessEnv;
  readonly mainRoot: string | null;
  /** The state database (path or URL): SPRINGFIELD_DB. */
  readonly dbPath: string;
  /** The folder the per-run `springfield` shims go under, and the command they run; null: no shim. */
  readonly shim: { readonly parent: string; readonly cli: () => readonly string[] } | null;
  /** The agent's stdout goes to stderr (our stdout carries one JSON document). */
  readonly json: boolean;
  /** Show the agent's output as printed, not its JSON events rendered. */
  readonly raw: boolean;
  /** Writes the run's context and returns the file the agent reads (the CLI renders it). */
  readonly writeContext: (prepared: AgentRunStart) => Promise<string>;
}

/** How one agent run went, for the caller to print. */
export interface AgentRunResult {
  readonly run: RunView;
  readonly prepared: AgentRunStart;
  readonly ended: Supervised;
  readonly contextFile: string;
  readonly heartbeats: number;
  readonly spawnError: { readonly code: string; readonly message: string } | null;
  readonly warnings: readonly string[];
  readonly startedAt: number;
}

/**
 * Runs an agent for a role on an epic: checks where it runs, reserves the worktree's ports, records
 * the run (claiming its step), writes its context, starts it in its own process group with the
 * SPRINGFIELD_* variables, renews the step's lease while it lives, reads its usage and error from its
 * output, and records its outcome (which releases what it still holds).
 */
export async function runAgent(req: AgentRunRequest): Promise<AgentRunResult> {
  const { store, role, epicId, actor, config, command } = req;
  const before = readHead(actor.worktree, req.env);
  // Agents work only where the epic's work lives: never a person's checkout, never another branch (docs/lifecycle.md).
  const epic = await store.getEpic(epicId);
  const misplaced = agentPlaceProblem(role, epic, actor.worktree, req.mainRoot, req.env);
  if (misplaced) throw new RefusedError('outside_epic_worktree', `${misplaced}; nothing was started`);
  // Ports are reserved before the run is recorded: a reservation that fails (the range used up, the store
  // unreachable) refuses with nothing claimed and no run left to reap.
  const facts = await worktreeFacts(store, {
    epic,
    worktree: actor.worktree,
    mainRoot: req.mainRoot ?? actor.worktree,
    config,
    env: req.env,
  });
  const prepared = await store.beginAgentRun({
    role,
    epicId,
    planArg: req.planArg,
    stepAnchor: req.stepAnchor,
    command,
    actor,
    leaseSeconds: req.leaseSeconds,
    headBefore: before?.commit ?? null,
    launchId: req.env.SPRINGFIELD_LAUNCH_ID || null,
    pid: process.pid,
  });
  const contextFile = await req.writeContext(prepared);
  const warnings: string[] = [];
  const heartbeat = startHeartbeat(store, prepared, req.leaseSeconds, warnings);

  const startedAt = Date.now();
  const env = agentEnv(req.env, {
    epic: epicId,
    step: prepared.stepAnchor,
    plan: prepared.planPath,
    worktree: actor.worktree,
    claimToken: prepared.holder.token ?? null,
    contextFile,
    role,
    runId: prepared.run.id,
    agent: prepared.agent,
    db: req.dbPath,
  });
  delete env.SPRINGFIELD_LAUNCH_ID;
  delete env.SPRINGFIELD_CONFLICT;
  // The worktree's ports and the config's env map, as its setup and verification get them (docs/worktrees.md, "Ports").
  addWorktreeVariables(env, facts);
  if (runsEditorRuntime(command[0], process.execPath, process.versions.electron !== undefined))
    env.ELECTRON_RUN_AS_NODE = '1';
  // `springfield` on the agent's PATH: this same CLI, run by this same runtime (docs/agents.md).
  const shim = req.shim ? await cliShimFor(store, req.shim.parent, req.shim.cli, prepared.run.id, warnings) : null;
  if (shim) env.PATH = pathWith(shim, env.PATH, delimiter);
  const preset = presetFor(command);
  const progressed = progressProbe(store, epicId, prepared.planPath);
  await progressed().catch(() => false); // the mark progress is measured from
  const stall =
    config.stallSeconds > 0
      ? { ms: config.stallSeconds * 1000, retryLines: preset?.retryLines ?? [], progressed }
      : null;
  const ended = await supervise(
    expandAgentArgv(command, env),
    {
      cwd: actor.worktree,
      env,
      json: req.json,
      timeoutMs: req.timeoutSeconds * 1000,
      graceMs: config.killGraceSeconds * 1000,
      captureStdoutBytes: USAGE_CAPTURE_BYTES,
      captureStderrBytes: ERROR_CAPTURE_BYTES,
      stall,
      render: req.raw ? null : agentOutputFormat(preset?.id),
    },
    (pid) => store.setAgentPid(prepared.run.id, pid),
  );
  const heartbeats = heartbeat.stop();
  if (shim) removeCliShim(shim);
  const after = readHead(actor.worktree, req.env);
  // A person's main worktree may change branch while a planner works there; an epic's worktree may not.
  const spawnError = ended.spawnError ? describeSpawnError(command[0] ?? '', ended.spawnError) : null;
  const fault = spawnError ? null : prepared.ownWorktree ? branchFault(before, after) : null;
  const reopen =
    fault !== null &&
    before?.branch != null &&
    (await completedOffBranch(store, prepared, actor.worktree, before.branch, req.env));
  // A role whose config names how its agent reports usage has its stdout read for tokens and cost (docs/lifecycle.md).
  // The usage of the preset that ran: a fallback's or a routed preset's, not the role's first (runConfig.ts).
  const usageSpec =
    preset && typeof config.usage?.[role] === 'string' ? (preset.usage ?? null) : usageSpecFor(config, role, command);
  const usage = usageSpec ? readUsage(usageSpec, ended.stdout ?? '') : null;
  // The agent's own words for why it failed, where its CLI reports them (docs/scheduler-faults.md, "The headline").
  const said =
    ended.exitCode !== 0 ? agentError(preset?.errors ?? [], `${ended.stdout ?? ''}\n${ended.stderr ?? ''}`) : null;
  // A usage or rate limit is no failure: the run ends limited and the preset waits out the limit on this host.
  const limited = limitOfRun(req.env, command, ended, said, prepared.run.id, warnings);
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
      timeoutSeconds: req.timeoutSeconds,
      usage,
      stopped: ended.stoppedBy ? stoppedReason(ended.stoppedBy) : null,
      stalled: ended.stalled,
      unavailable: spawnError?.message ?? null,
      agentError: said,
      limited,
    },
    actor,
  );
  if (!limited) settleRunLimit(req.env, command, startedAt, run.status, warnings);
  if (spawnError)
    warnings.unshift(`${spawnError.message} (run ${run.id} recorded as ${run.status}, exit ${ended.exitCode})`);
  return { run, prepared, ended, contextFile, heartbeats, spawnError, warnings, startedAt };
}

/** How much of an agent's stdout is kept to read its usage and its error from (the reports come last). */
const USAGE_CAPTURE_BYTES = 8 * 1024 * 1024;
/** How much of its stderr is kept to read its error from. */
const ERROR_CAPTURE_BYTES = 256 * 1024;
