import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import * as z from 'zod/mini';
import en from 'zod/v4/locales/en.js';
import {
  AGENT_ROLES,
  type AgentRole,
  BUILDING_ROLE,
  PLANNING_ROLE,
  ROLE_REGISTRY,
  type RoleSpec,
  RUN_ROLES,
  type RunRole,
} from '../../shared/roles.ts';
import { AGENT_PRESETS, presetFor } from './presets.ts';
import type { UsageSpec } from './usage.ts';
import type { BudgetConfig } from '../epics/costBudget.ts';
import { COMPLEXITIES, type Complexity } from '../epics/complexity.ts';
import { UsageError } from '../errors.ts';
import { messageOf } from '../../shared/errorMessage.ts';
import { FLEET_SCHEMA, type FleetSettings, fleetSettingsOf } from '../../shared/fleetSettings.ts';

export { AGENT_ROLES, type AgentRole } from '../../shared/roles.ts';

/** A command as an argument vector: the program, then its arguments; never shell text. */
const CommandSchema = z
  .array(z.string().check(z.minLength(1, 'must be a non-empty string')))
  .check(z.minLength(1, 'a command needs at least the program'));

/** The roles a run of which has a timeout: the agents and the scheduler's setup of a new worktree. */
export type TimedRole = RunRole;
/** A whole number from `min` to `max`. */
const whole = (min: number, max: number) => z.int().check(z.gte(min), z.lte(max));
const Seconds = whole(1, 31_622_400);

const Path = z
  .string()
  .check(z.regex(/^[A-Za-z0-9_]+(\.[A-Za-z0-9_]+)*$/, 'must be a dotted field path like usage.input_tokens'));
/** How to read usage from a role's output: a preset's name (claude, codex, …) or the fields themselves. */
const UsageChoice = z.union([
  z.string().check(
    z.refine((name) => AGENT_PRESETS.some((p) => p.id === name && p.usage !== null), {
      message: `must name a preset that reports usage (${AGENT_PRESETS.filter((p) => p.usage !== null)
        .map((p) => p.id)
        .join(', ')}) or give the fields`,
    }),
  ),
  z.strictObject({
    format: z.enum(['jsonl', 'json']),
    match: z.record(z.string(), z.string()),
    costUsd: z.optional(Path),
    inputTokens: z.optional(Path),
    outputTokens: z.optional(Path),
    cacheReadTokens: z.optional(Path),
    cacheWriteTokens: z.optional(Path),
    premiumRequests: z.optional(Path),
    perModel: z.optional(Path),
    sum: z.optional(z.boolean()),
  }),
]);

/** An object with an optional `schema` per role of `roles` (the role registry's), and no other key. */
function perRole<K extends string, S extends z.ZodMiniType>(roles: readonly K[], schema: S) {
  return z.strictObject(
    Object.fromEntries(roles.map((role) => [role, z.optional(schema)])) as Record<K, z.ZodMiniOptional<S>>,
  );
}

/** A spending limit: a positive number (dollars, minutes). */
const Limit = z.number().check(z.positive('must be a positive number'), z.lte(1e9));
/** Text without a NUL. */
const noNul = z.refine<string>((v) => !v.includes('\0'), 'must not contain NUL');

const ConfigSchema = z.strictObject({
  roles: z.optional(perRole(AGENT_ROLES, CommandSchema)),
  fallbacks: z.optional(perRole(AGENT_ROLES, z.array(CommandSchema).check(z.maxLength(5)))),
  verification: z.optional(z.array(CommandSchema)),
  leaseSeconds: z.optional(Seconds),
  runTimeoutSeconds: z.optional(Seconds),
  timeouts: z.optional(perRole(RUN_ROLES, Seconds)),
  killGraceSeconds: z.optional(whole(0, 3600)),
  stallSeconds: z.optional(whole(0, 86_400)),
  retryLimit: z.optional(whole(1, 100)),
  retryBackoffSeconds: z.optional(
    z.array(whole(0, 86_400)).check(z.minLength(1, 'needs at least one delay'), z.maxLength(20)),
  ),
  setup: z.optional(z.array(CommandSchema)),
  archive: z.optional(z.array(CommandSchema)),
  run: z.optional(z.array(CommandSchema)),
  ports: z.optional(whole(0, 100)),
  env: z.optional(
    z.record(
      z.string().check(
        z.regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be a variable name like PORT'),
        z.refine((k) => !k.startsWith('SPRINGFIELD_'), 'SPRINGFIELD_ variables are set by Springfield'),
      ),
      z.string().check(noNul),
    ),
  ),
  merge: z.optional(z.enum(['squash', 'pr'])),
  remote: z.optional(
    z.string().check(z.regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, 'must be a git remote name like origin')),
  ),
  prCheckSeconds: z.optional(whole(0, 86_400)),
  planner: z.optional(z.enum([PLANNING_ROLE, 'person'])),
  reviewedByPerson: z.optional(z.array(z.enum(COMPLEXITIES as [Complexity, ...Complexity[]]))),
  worktreeRoot: z.optional(z.string().check(z.trim(), z.minLength(1, 'must name a folder'), noNul)),
  usage: z.optional(perRole(AGENT_ROLES, UsageChoice)),
  filesAware: z.optional(z.boolean()),
  mechanicalMerge: z.optional(z.boolean()),
  mergeable: z.optional(z.array(z.string().check(z.trim(), z.minLength(1, 'must be a file glob')))),
  regenerate: z.optional(z.record(z.string().check(z.trim(), z.minLength(1, 'must be a file glob')), CommandSchema)),
  routes: z.optional(
    z.strictObject({
      [BUILDING_ROLE]: z.optional(
        z.strictObject({
          presets: z
            .array(
              z.string().check(
                z.refine((id) => AGENT_PRESETS.some((p) => p.id === id && p.roles[BUILDING_ROLE]), {
                  message: `must name a preset that can build (${AGENT_PRESETS.filter((p) => p.roles[BUILDING_ROLE])
                    .map((p) => p.id)
                    .join(', ')})`,
                }),
              ),
            )
            .check(z.minLength(2, 'needs at least two presets to choose between')),
          by: z.optional(z.enum(['acceptance', 'cost'])),
        }),
      ),
    }),
  ),
  budget: z.optional(
    z.strictObject({
      epicUsd: z.optional(Limit),
      dailyUsd: z.optional(Limit),
      epicTokens: z.optional(z.int().check(z.gte(1))),
      epicMinutes: z.optional(Limit),
    }),
  ),
  ...FLEET_SCHEMA,
});

/** The fleet's keys (admission, slots, maxWaitingOnPerson, notify) are src/shared/fleetSettings.ts's. */
export interface RunConfig extends FleetSettings {
  readonly roles: Readonly<Partial<Record<AgentRole, readonly string[]>>>;
  /** Per role, the commands run in order while the role's own is limited or cannot run (docs/agents.md, "Fallbacks"). */
  readonly fallbacks?: Readonly<Partial<Record<AgentRole, readonly (readonly string[])[]>>>;
  readonly verification: readonly (readonly string[])[];
  /** A number, or "auto": the scheduler finds it (docs/scheduler.md, "The fleet"). */
  readonly maxParallelAgents: number | 'auto';
  readonly leaseSeconds: number;
  /** The default timeout of a run, for roles without their own in `timeouts`. */
  readonly runTimeoutSeconds: number;
  readonly timeouts: Readonly<Partial<Record<TimedRole, number>>>;
  /** After a timeout, SIGTERM goes to the agent's process group; SIGKILL follows after this grace. */
  readonly killGraceSeconds: number;
  /** A run with no output (but its CLI's own retries) and no progress in the store this long is ended as stalled; 0: never. */
  readonly stallSeconds: number;
  /** Consecutive non-successes of one role on one epic that block it (agent_failed). */
  readonly retryLimit: number;
  /** The wait before the retry after the n-th consecutive failure (the last value repeats). */
  readonly retryBackoffSeconds: readonly number[];
  /** Commands run once in each new worktree before any agent (argument arrays). */
  readonly setup: readonly (readonly string[])[];
  /** Commands run in a worktree before it is removed. */
  readonly archive: readonly (readonly string[])[];
  /** Commands that start the epic's app in its worktree (`springfield app`), one after another. */
  readonly run: readonly (readonly string[])[];
  /** Ports reserved per worktree (SPRINGFIELD_PORT, SPRINGFIELD_PORTS); 0: none (docs/worktrees.md). */
  readonly ports: number;
  /** Variables set for every command in a worktree, `$SPRINGFIELD_…` in a value replaced (docs/worktrees.md). */
  readonly env: Readonly<Record<string, string>>;
  /** How Lovejoy lands a verified epic: a local squash merge, or `gh pr create`. */
  readonly merge?: 'squash' | 'pr';
  /** PR mode: the git remote the epic's branch is pushed to (default origin). */
  readonly remote?: string;
  /** PR mode: at most one `gh pr view` per epic this often (default 60 s). */
  readonly prCheckSeconds?: number;
  /** Who writes a new epic's plan unless its creator says (`epic create --planner`): lisa (default) or person. */
  readonly planner: typeof PLANNING_ROLE | 'person';
  /** Complexities whose built epics a person reviews instead of Bart (Review changes); default none. */
  readonly reviewedByPerson?: readonly Complexity[];
  /** Where epic and planning worktrees go (relative to the main worktree); default a sibling `<repo>.springfield/` (docs/worktrees.md). */
  readonly worktreeRoot?: string;
  /** Per role: how to read tokens and cost from the agent's output (docs/lifecycle.md). */
  readonly usage?: Readonly<Partial<Record<AgentRole, string | UsageSpec>>>;
  /** false turns files-aware scheduling off: builders start regardless of the files of other epics' steps (docs/files.md). Default on. */
  readonly filesAware?: boolean;
  /** false: no conflict is resolved mechanically and no file is a hotspot (docs/files.md). Default on. */
  readonly mechanicalMerge?: boolean;
  /** Hotspots besides the built-in kinds: files whose conflicts resolve mechanically, never overlapping in files-aware scheduling (docs/files.md). */
  readonly mergeable?: readonly string[];
  /** Generated files (globs) and lockfiles, each with the command that regenerates it after a conflict (docs/files.md). */
  readonly regenerate?: Readonly<Record<string, readonly string[]>>;
  /** What an epic and a day may spend on agents (docs/budgets.md); absent: no limit. */
  readonly budget?: BudgetConfig;
  /** The builder's presets to route between per kind of step (docs/agents.md, "Routing"). */
  readonly routes?: { readonly ralph?: RouteConfig };
}

export interface RouteConfig {
  readonly presets: readonly string[];
  readonly by?: 'acceptance' | 'cost';
}

/** Whether files-aware scheduling is on (docs/files.md): unless the config says `"filesAware": false`. */
export function filesAwareOf(config: RunConfig): boolean {
  return config.filesAware !== false;
}

/** The usage reader for a role's runs, or null when its config names none. */
export function usageSpecFor(config: RunConfig, role: AgentRole, command: readonly string[] = []): UsageSpec | null {
  // A routed role runs on several presets: each run's usage is read as its own preset reports it.
  const routed = role === BUILDING_ROLE && config.routes?.ralph ? presetFor(command) : undefined;
  if (routed) return routed.usage;
  const choice = config.usage?.[role];
  if (choice === undefined) return null;
  return typeof choice === 'string' ? (AGENT_PRESETS.find((p) => p.id === choice)?.usage ?? null) : choice;
}

export const DEFAULT_RUN_CONFIG: RunConfig = {
  roles: {},
  verification: [],
  maxParallelAgents: 3,
  leaseSeconds: 7200,
  runTimeoutSeconds: 3600,
  timeouts: {},
  killGraceSeconds: 10,
  stallSeconds: 300,
  retryLimit: 3,
  retryBackoffSeconds: [15, 60, 240],
  setup: [],
  archive: [],
  run: [],
  ports: 10,
  env: {},
  planner: PLANNING_ROLE,
};

/** The timeout of one role's runs, in seconds (setup defaults to 30 minutes, agents to runTimeoutSeconds). */
export function timeoutFor(config: RunConfig, role: TimedRole): number {
  const spec: RoleSpec = ROLE_REGISTRY[role];
  return config.timeouts[role] ?? spec.timeoutSeconds ?? config.runTimeoutSeconds;
}

/** `.springfield/config.json` beside the database file. */
export function configPathFor(dbPath: string): string {
  return join(dirname(dbPath), 'config.json');
}

/** Reads the run configuration; a missing file gives the defaults, a bad one a UsageError `file: path: reason`. */
export function loadRoleCommands(configPath: string): RunConfig {
  let text: string;
  try {
    text = readFileSync(configPath, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return DEFAULT_RUN_CONFIG;
    throw new UsageError('invalid_config', `${configPath}: cannot read: ${messageOf(err)}`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new UsageError('invalid_config', `${configPath}: invalid JSON: ${messageOf(err)}`);
  }
  return parseRunConfig(value, configPath);
}

/** Validates an already-parsed configuration value (the file's, or editor settings) named `source` in errors. */
export function parseRunConfig(value: unknown, source: string): RunConfig {
  z.config(en()); // zod/mini's messages in English, as the full zod sets them when loaded
  const parsed = ConfigSchema.safeParse(value);
  if (!parsed.success) {
    const [first, ...others] = parsed.error.issues;
    const where = first && first.path.length > 0 ? formatPath(first.path) : '(top level)';
    const more = others.length > 0 ? ` (and ${others.length} more problem${others.length === 1 ? '' : 's'})` : '';
    throw new UsageError('invalid_config', `${source}: ${where}: ${first?.message ?? 'invalid'}${more}`);
  }
  const c = parsed.data;
  return {
    roles: c.roles ?? {},
    verification: c.verification ?? [],
    maxParallelAgents: c.maxParallelAgents ?? DEFAULT_RUN_CONFIG.maxParallelAgents,
    leaseSeconds: c.leaseSeconds ?? DEFAULT_RUN_CONFIG.leaseSeconds,
    runTimeoutSeconds: c.runTimeoutSeconds ?? DEFAULT_RUN_CONFIG.runTimeoutSeconds,
    timeouts: c.timeouts ?? {},
    killGraceSeconds: c.killGraceSeconds ?? DEFAULT_RUN_CONFIG.killGraceSeconds,
    stallSeconds: c.stallSeconds ?? DEFAULT_RUN_CONFIG.stallSeconds,
    retryLimit: c.retryLimit ?? DEFAULT_RUN_CONFIG.retryLimit,
    retryBackoffSeconds: c.retryBackoffSeconds ?? DEFAULT_RUN_CONFIG.retryBackoffSeconds,
    setup: c.setup ?? [],
    archive: c.archive ?? [],
    run: c.run ?? [],
    ports: c.ports ?? DEFAULT_RUN_CONFIG.ports,
    env: c.env ?? {},
    planner: c.planner ?? DEFAULT_RUN_CONFIG.planner,
    ...(c.fallbacks && Object.keys(c.fallbacks).length > 0 ? { fallbacks: c.fallbacks } : {}),
    ...(c.merge ? { merge: c.merge } : {}),
    ...(c.reviewedByPerson?.length ? { reviewedByPerson: c.reviewedByPerson } : {}),
    ...(c.remote ? { remote: c.remote } : {}),
    ...(c.prCheckSeconds !== undefined ? { prCheckSeconds: c.prCheckSeconds } : {}),
    ...(c.worktreeRoot ? { worktreeRoot: c.worktreeRoot } : {}),
    ...(c.usage ? { usage: c.usage as RunConfig['usage'] } : {}),
    ...(c.filesAware === false ? { filesAware: false } : {}),
    ...(c.mechanicalMerge === false ? { mechanicalMerge: false } : {}),
    ...(c.mergeable?.length ? { mergeable: c.mergeable } : {}),
    ...(c.regenerate && Object.keys(c.regenerate).length > 0 ? { regenerate: c.regenerate } : {}),
    ...(c.budget && Object.keys(c.budget).length > 0 ? { budget: c.budget } : {}),
    ...fleetSettingsOf(c),
    ...(c.routes?.ralph ? { routes: { ralph: c.routes.ralph } } : {}),
  };
}

function formatPath(path: readonly PropertyKey[]): string {
  return path.map((p, i) => (typeof p === 'number' ? `[${p}]` : `${i === 0 ? '' : '.'}${String(p)}`)).join('');
}
