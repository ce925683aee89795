import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { constants } from 'node:os';
import { dirname, join } from 'node:path';
import { getEpic } from '../../core/epics/epicStore.ts';
import { EnvironmentError, SpringfieldError, UsageError } from '../../core/errors.ts';
import { expandAgentArgv } from '../../core/runs/agentArgv.ts';
import { agentEnv } from '../../core/runs/agentEnv.ts';
import { finishRun, startRun } from '../../core/runs/recordRun.ts';
import { AGENT_ROLES, configPathFor, loadRoleCommands, type AgentRole } from '../../core/runs/roles.ts';
import { heartbeat } from '../../core/store/claims.ts';
import { assertHolder, findPlan, ownerOf, requireStep } from '../../core/store/rows.ts';
import type { RunView } from '../../core/store/runs.ts';
import type { Database } from '../../core/store/sqlite.ts';
import type { SqliteStore } from '../../core/store/sqliteStore.ts';
import type { Actor } from '../../core/store/types.ts';
import { flag, int, str } from '../args.ts';
import { LEASE_OPTION, type Command } from '../command.ts';
import type { CliContext } from '../context.ts';
import { duration, output } from '../output.ts';
import { renderContext } from '../render/contextText.ts';
import { planningStore } from '../planning.ts';
import { contextForRole } from '../rolePromptText.ts';

const FORWARDED: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

interface Prepared {
  readonly run: RunView;
  readonly planPath: string | null;
  readonly stepAnchor: string | null;
  /** The holder's identity with the claim's current token: what heartbeats are fenced by. */
  readonly holder: Actor;
  readonly agent: string;
}

interface Ended {
  readonly exitCode: number;
  readonly signal: NodeJS.Signals | null;
  readonly spawnError: NodeJS.ErrnoException | null;
}

export const runCommand: Command = {
  name: 'run',
  summary: 'run an agent for a role on an epic (and step): recorded in the store, lease heartbeated, values passed as SPRINGFIELD_* variables',
  positionals: [],
  options: [
    { name: 'role', type: 'string', placeholder: 'ROLE', description: `the role: ${AGENT_ROLES.join('|')}` },
    { name: 'epic', type: 'string', placeholder: 'ID', description: 'the epic the agent works on' },
    { name: 'step', type: 'string', placeholder: 'ANCHOR', description: 'the step this worktree holds; its lease is renewed every lease/3 while the agent lives' },
    { name: 'plan', type: 'string', placeholder: 'PATH', description: "the plan file (default: the epic's plan)" },
    { ...LEASE_OPTION, description: 'lease length in seconds renewed by each heartbeat (default: leaseSeconds of .springfield/config.json, else 7200)' },
  ],
  details: [
    "The agent command follows a bare '--': springfield run --role ralph --epic sf-a3f8 --step step-1 -- claude -p '…'",
    '$SPRINGFIELD_CONTEXT_FILE (or ${SPRINGFIELD_…}) inside an argument is replaced by that value; no shell is involved.',
    'The agent command is run directly (no shell) in the worktree, with SPRINGFIELD_EPIC, _STEP, _PLAN, _WORKTREE,',
    '_CLAIM_TOKEN, _CONTEXT_FILE, _ROLE, _RUN_ID, _AGENT and _DB set and ELECTRON_RUN_AS_NODE and VSCODE_* removed.',
    'Exits with the agent\'s exit code (128+N when killed by signal N; 127 when the command cannot be found).',
  ].join('\n'),
  async run(ctx) {
    const role = roleOf(str(ctx.args, 'role'));
    const epicId = str(ctx.args, 'epic');
    if (epicId === undefined) throw new UsageError('missing_option', "run needs --epic ID (see 'springfield run --help')");
    const command = ctx.args.rest;
    if (command.length === 0 || command[0] === '') throw new UsageError('missing_command', "run needs the agent command after '--', e.g. springfield run --role ralph --epic sf-1234 -- claude -p '…'");
    const planFlag = str(ctx.args, 'plan');
    const planArg = planFlag !== undefined ? ctx.planKey(planFlag) : undefined;
    const leaseSeconds = int(ctx.args, 'lease') ?? loadRoleCommands(configPathFor(ctx.dbPath)).leaseSeconds;
    const store = planningStore(ctx, 'write');
    const actor = ctx.actor;
    const stepAnchor = str(ctx.args, 'step') ?? null;

    const prepared = await store.write((db, now) => prepare(db, now, { role, epicId, planArg, stepAnchor, command, actor, leaseSeconds }));
    const contextFile = await writeContextFile(ctx, store, prepared);
    const values = {
      epic: epicId, step: prepared.stepAnchor, plan: prepared.planPath, worktree: actor.worktree, claimToken: prepared.holder.token ?? null,
      contextFile, role, runId: prepared.run.id, agent: prepared.agent, db: ctx.dbPath,
    };
    const warnings: string[] = [];
    let heartbeats = prepared.stepAnchor === null ? 0 : 1;
    const timer = prepared.stepAnchor === null ? undefined : setInterval(() => {
      store.heartbeat(prepared.planPath ?? '', prepared.stepAnchor ?? '', prepared.holder, { leaseSeconds }).then(() => { heartbeats++; }, (err: unknown) => {
        warnings.push(`stopped renewing the lease on ${prepared.stepAnchor}: ${err instanceof Error ? err.message : String(err)}`);
        clearInterval(timer);
      });
    }, Math.max(100, (leaseSeconds * 1000) / 3));
    timer?.unref();

    const started = Date.now();
    const env = agentEnv(ctx.env, values);
    const ended = await supervise(expandAgentArgv(command, env), { cwd: actor.worktree, env, json: flag(ctx.args, 'json') });
    clearInterval(timer);
    const run = await store.write((db, now) => finishRun(db, now, prepared.run.id, { exitCode: ended.exitCode, signal: ended.signal }, actor));

    const where = `${role} on ${epicId}${prepared.stepAnchor ? ` ${prepared.stepAnchor}` : ''}`;
    const spawnError = ended.spawnError ? describeSpawnError(command[0] ?? '', ended.spawnError) : null;
    if (spawnError) warnings.unshift(`${spawnError.message} (run ${run.id} recorded as failed, exit ${ended.exitCode})`);
    const how = ended.signal ? `killed by ${ended.signal}` : `exit ${ended.exitCode}`;
    return output(
      { run, exit_code: ended.exitCode, signal: ended.signal, context_file: contextFile, lease_seconds: prepared.stepAnchor ? leaseSeconds : null, heartbeats, spawn_error: spawnError },
      `Run ${run.id} (${where}) ${run.status}: ${how} after ${duration(Date.now() - started)}`,
      ended.exitCode,
      warnings,
    );
  },
};

function roleOf(given: string | undefined): AgentRole {
  if (given === undefined) throw new UsageError('missing_option', `run needs --role ${AGENT_ROLES.join('|')}`);
  const role = AGENT_ROLES.find((r) => r === given);
  if (!role) throw new UsageError('bad_option', `--role must be one of ${AGENT_ROLES.join(', ')}, got '${given}'`);
  return role;
}

interface PrepareInput {
  readonly role: AgentRole;
  readonly epicId: string;
  readonly planArg: string | undefined;
  readonly stepAnchor: string | null;
  readonly command: readonly string[];
  readonly actor: Actor;
  readonly leaseSeconds: number;
}

/** In one transaction: checks the epic (and that this worktree holds the step, renewing its lease), then records the run. */
function prepare(db: Database, now: Date, input: PrepareInput): Prepared {
  const { actor, stepAnchor } = input;
  const epic = getEpic(db, input.epicId);
  const planPath = input.planArg ?? epicPlan(db, epic.id);
  const owning = planPath !== null ? findPlan(db, planPath)?.epic_id : null;
  if (owning && owning !== epic.id) throw new UsageError('wrong_plan', `${planPath} belongs to epic ${owning}, not ${epic.id}`);
  let holder: Actor = { ...actor, token: null };
  let agent = actor.agent;
  if (stepAnchor !== null) {
    if (planPath === null) throw new UsageError('no_plan', `${epic.id} has no plan yet; pass --plan PATH with --step`);
    const owner = ownerOf(db, requireStep(db, planPath, stepAnchor));
    assertHolder(owner, actor, 'run an agent on');
    holder = { ...actor, token: owner.claim_token };
    agent ??= owner.claimed_agent;
    heartbeat(db, now, planPath, stepAnchor, holder, input.leaseSeconds);
  }
  agent ??= input.role;
  const run = startRun(db, now, {
    epicId: epic.id, planPath, stepAnchor, role: input.role, iteration: input.role === 'lisa' ? epic.plan_iteration : epic.iteration,
    worktree: actor.worktree, agentId: agent, command: input.command, pid: process.pid,
  }, actor);
  return { run, planPath, stepAnchor, holder, agent };
}

/** The epic's live plan, else the plan of its latest proposed version, else none. */
function epicPlan(db: Database, epicId: string): string | null {
  const live = db.prepare('SELECT plan_path FROM plans WHERE epic_id = ? ORDER BY updated_at DESC LIMIT 1').pluck().get(epicId) as string | undefined;
  const proposed = db.prepare('SELECT plan_path FROM plan_versions WHERE epic_id = ? ORDER BY version DESC LIMIT 1').pluck().get(epicId) as string | undefined;
  return live ?? proposed ?? null;
}

/** Writes the run's context as markdown under the database folder (`context/<run-id>.md`); a failure ends the run as failed. */
async function writeContextFile(ctx: CliContext, store: SqliteStore, p: Prepared): Promise<string> {
  const file = join(dirname(ctx.dbPath), 'context', `${p.run.id}.md`);
  try {
    const view = await store.context({ epicId: p.run.epic_id ?? undefined, stepAnchor: p.stepAnchor ?? undefined, actor: p.holder, docsRoot: ctx.location.mainRoot ?? ctx.location.worktreeRoot });
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, contextForRole(ctx, p.run.role, view, p.planPath, renderContext(view)) + '\n');
    return file;
  } catch (err) {
    await store.write((db, now) => finishRun(db, now, p.run.id, { exitCode: 1, signal: null }, p.holder));
    if (err instanceof SpringfieldError) throw err;
    throw new EnvironmentError('context_unwritable', `${file}: cannot write the run's context (${err instanceof Error ? err.message : String(err)}); run ${p.run.id} recorded as failed`);
  }
}

/** Spawns the agent without a shell, forwards SIGINT/SIGTERM/SIGHUP to it and resolves when it ends. */
function supervise(command: readonly string[], options: { cwd: string; env: NodeJS.ProcessEnv; json: boolean }): Promise<Ended> {
  return new Promise((resolve) => {
    // With --json our stdout carries exactly one document, so the agent's stdout goes to stderr.
    const child = spawn(command[0] as string, command.slice(1), { stdio: ['inherit', options.json ? 2 : 'inherit', 'inherit'], cwd: options.cwd, env: options.env });
    const forward = (signal: NodeJS.Signals): void => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    };
    for (const s of FORWARDED) process.on(s, forward);
    const done = (ended: Ended): void => {
      for (const s of FORWARDED) process.off(s, forward);
      resolve(ended);
    };
    child.once('error', (err: NodeJS.ErrnoException) => {
      if (child.pid === undefined) done({ exitCode: err.code === 'EACCES' ? 126 : 127, signal: null, spawnError: err });
    });
    child.once('exit', (code, signal) => {
      done({ exitCode: signal ? 128 + (constants.signals[signal] ?? 0) : code ?? 1, signal, spawnError: null });
    });
  });
}

function describeSpawnError(program: string, err: NodeJS.ErrnoException): { code: string; message: string } {
  if (err.code === 'ENOENT') return { code: 'command_not_found', message: `agent command not found: '${program}'` };
  if (err.code === 'EACCES') return { code: 'command_not_executable', message: `agent command is not executable: '${program}'` };
  return { code: 'spawn_failed', message: `cannot start agent command '${program}': ${err.message}` };
}
