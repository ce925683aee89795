/**
 * Every role that acts on an epic, in one registry (docs/agents.md): Marge is the person; Lisa,
 * Ralph, Bart and Lovejoy are agents; setup is the scheduler's own preparation of a new worktree.
 * The lists and types below, the run configuration's role keys, the presets, the prompts, the icons,
 * fault counting and the scheduler's staffing derive from it: adding a role is an entry here, its
 * prompt (src/core/agents/prompts/) and its rule (src/core/scheduler/rules.ts).
 */
export interface RoleSpec {
  /** A person, an agent (`springfield run --role`, one of the scheduler's slots), or the scheduler's own work. */
  readonly kind: 'person' | 'agent' | 'scheduler';
  /** Its name wherever a person reads it: the CLI, the views, the webviews, the logs. */
  readonly name: string;
  /** Who it is, in an agent's kickoff prompt: "Lisa, the planner". */
  readonly title: string | null;
  /** What it does, in the editor's role picker: "Lisa (plans)". */
  readonly does: string | null;
  /**
   * The scheduler's rule that acts for it (src/core/scheduler/rules.ts): planning (Lisa's runs count
   * plan iterations), building (build iterations; Ralph claims steps), reviewing, merging.
   */
  readonly rule: 'planning' | 'building' | 'reviewing' | 'merging' | null;
  /** The scheduler starts an agent command for it (presets fill it) to do this; null: it never does. */
  readonly work: string | null;
  /** Where its agent works (docs/lifecycle.md): the epic's planning worktree, or its own; null: not checked. */
  readonly worktree: 'planning' | 'epic' | null;
  /** Its runs are rows of the store's `runs` (their role column). */
  readonly runs: boolean;
  /** Its runs count among an epic's agent sessions (`springfield runs`, the retrospective). */
  readonly sessions: boolean;
  /** The scheduler counts its runs' failures on an epic: backoff, then agent_failed (docs/scheduler-faults.md). */
  readonly faults: boolean;
  /** Its prompt (src/core/agents/prompts/<name>.md), and where different the one of a run without a step. */
  readonly prompt: string | null;
  readonly promptWithoutStep?: string;
  /** Its run timeout, in seconds, when the configuration sets none for it (else runTimeoutSeconds). */
  readonly timeoutSeconds?: number;
  /** Codicons: its agent's terminal, and its running run in the Agents view. */
  readonly icon: string;
  readonly runningIcon: string;
}

export const ROLE_REGISTRY = {
  marge: {
    kind: 'person',
    name: 'Marge',
    title: null,
    does: null,
    rule: null,
    work: null,
    worktree: null,
    runs: false,
    sessions: false,
    faults: false,
    prompt: null,
    icon: 'person',
    runningIcon: 'person',
  },
  lisa: {
    kind: 'agent',
    name: 'Lisa',
    title: 'the planner',
    does: 'plans',
    rule: 'planning',
    work: 'write its plan',
    worktree: 'planning',
    runs: true,
    sessions: true,
    faults: true,
    prompt: 'lisa',
    icon: 'lightbulb',
    runningIcon: 'terminal',
  },
  ralph: {
    kind: 'agent',
    name: 'Ralph',
    title: 'the builder',
    does: 'builds',
    rule: 'building',
    work: 'build its next step',
    worktree: 'epic',
    runs: true,
    sessions: true,
    faults: true,
    prompt: 'ralph',
    promptWithoutStep: 'ralph-fix',
    icon: 'tools',
    runningIcon: 'terminal',
  },
  bart: {
    kind: 'agent',
    name: 'Bart',
    title: 'the reviewer',
    does: 'reviews',
    rule: 'reviewing',
    work: 'review it',
    worktree: 'epic',
    runs: true,
    sessions: true,
    faults: true,
    prompt: 'bart',
    icon: 'eye',
    runningIcon: 'eye',
  },
  // Mechanical: the scheduler merges by itself; a lovejoy command is accepted and `springfield run --role lovejoy`
  // records a run, but the scheduler starts none (docs/state-machine.md).
  lovejoy: {
    kind: 'agent',
    name: 'Lovejoy',
    title: null,
    does: null,
    rule: 'merging',
    work: null,
    worktree: null,
    runs: true,
    sessions: true,
    faults: false,
    prompt: null,
    icon: 'git-merge',
    runningIcon: 'terminal',
  },
  setup: {
    kind: 'scheduler',
    name: 'Setup',
    title: null,
    does: null,
    rule: 'building',
    work: null,
    worktree: null,
    runs: true,
    sessions: false,
    faults: true,
    prompt: null,
    timeoutSeconds: 1800,
    icon: 'terminal',
    runningIcon: 'gear',
  },
} as const satisfies Readonly<Record<string, RoleSpec>>;

type Registry = typeof ROLE_REGISTRY;
/** Every role of the registry, setup included. */
export type RoleId = keyof Registry;
type Where<P> = { [K in RoleId]: Registry[K] extends P ? K : never }[RoleId];

/** Who acts on an epic: the person and the agents. */
export type Role = Where<{ kind: 'person' | 'agent' }>;
/** The roles an agent run can take (Marge is the person, never a command). */
export type AgentRole = Where<{ kind: 'agent' }>;
/** The roles the scheduler starts an agent command for. */
export type StartedRole = Where<{ work: string }>;
/** The roles whose runs the store records. */
export type RunRole = Where<{ runs: true }>;
/** The roles whose runs count as an epic's agent sessions. */
export type SessionRole = Where<{ sessions: true }>;
/** The roles whose runs the scheduler counts faults of. */
export type FaultRole = Where<{ faults: true }>;
/** The prompts shipped with Springfield (src/core/agents/prompts/<name>.md). */
export type PromptName = {
  [K in RoleId]: Registry[K]['prompt'] | (Registry[K] extends { promptWithoutStep: infer P } ? P : never);
}[RoleId] &
  string;

const IDS = Object.keys(ROLE_REGISTRY) as RoleId[];
/** The roles, in the registry's order, whose entry passes `test`. */
function rolesWhere<K extends RoleId>(test: (spec: RoleSpec) => boolean): readonly K[] {
  return IDS.filter((id) => test(ROLE_REGISTRY[id])) as K[];
}

export const ROLES = rolesWhere<Role>((r) => r.kind !== 'scheduler');
export const AGENT_ROLES = rolesWhere<AgentRole>((r) => r.kind === 'agent');
export const STARTED_ROLES = rolesWhere<StartedRole>((r) => r.work !== null);
export const RUN_ROLES = rolesWhere<RunRole>((r) => r.runs);
export const SESSION_ROLES = rolesWhere<SessionRole>((r) => r.sessions);
export const FAULT_ROLES = rolesWhere<FaultRole>((r) => r.faults);
export const PROMPT_NAMES: readonly PromptName[] = IDS.flatMap((id) => {
  const r: RoleSpec = ROLE_REGISTRY[id];
  return [r.prompt, r.promptWithoutStep].filter((p): p is string => typeof p === 'string') as PromptName[];
});

/** The one agent role that acts for `rule`: the only agent whose entry names it (checked when this module loads). */
type AgentOf<R> = { [K in AgentRole]: Registry[K]['rule'] extends R ? K : never }[AgentRole];
function agentOf<R extends 'planning' | 'building' | 'reviewing' | 'merging'>(rule: R): AgentOf<R> {
  const found = AGENT_ROLES.filter((id) => ROLE_REGISTRY[id].rule === rule);
  if (found.length !== 1)
    throw new Error(`the role registry must have one agent for the ${rule} rule, not ${found.length}`);
  return found[0] as AgentOf<R>;
}
/** Whose runs are an epic's plan iterations (Lisa), who builds and claims steps (Ralph), who reviews (Bart), who merges (Lovejoy). */
export const PLANNING_ROLE = agentOf('planning');
export const BUILDING_ROLE = agentOf('building');
export const REVIEWING_ROLE = agentOf('reviewing');
export const MERGING_ROLE = agentOf('merging');
/** The roles whose ended runs that were not a success spend one of the epic's build iterations: the builder and the reviewer. */
export const BUILD_ITERATION_ROLES: readonly (typeof BUILDING_ROLE | typeof REVIEWING_ROLE)[] = [
  BUILDING_ROLE,
  REVIEWING_ROLE,
];
/** The person (Marge): a person's review is recorded under this agent id when they give none. */
export const PERSON_ROLE = rolesWhere<Where<{ kind: 'person' }>>((r) => r.kind === 'person')[0] as Where<{
  kind: 'person';
}>;
/** The scheduler's own work recorded like an agent run (worktree setup): shown in the Agents view, never a session. */
export const SETUP_ROLE = rolesWhere<Where<{ kind: 'scheduler' }>>((r) => r.kind === 'scheduler')[0] as Where<{
  kind: 'scheduler';
}>;

/** Display names, the same in the CLI, the views and the webviews. */
export const ROLE_NAMES: Readonly<Record<Role, string>> = Object.fromEntries(
  ROLES.map((id) => [id, ROLE_REGISTRY[id].name]),
) as Record<Role, string>;

/** The registry's entry of `role`, or undefined for a string that names none (a row written by another version). */
export function roleSpec(role: string): RoleSpec | undefined {
  return Object.hasOwn(ROLE_REGISTRY, role) ? ROLE_REGISTRY[role as RoleId] : undefined;
}

/** True when `role` is one of `list` (a run's or an option's role, read as text). */
export function isRoleIn<K extends RoleId>(list: readonly K[], role: string | null | undefined): role is K {
  return (list as readonly string[]).includes(role ?? '');
}
