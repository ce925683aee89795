/**
 * Which of a role's agent commands the scheduler starts now (docs/agents.md, "Usage limits" and
 * "Fallbacks"): the first, unless its preset is limited on this host or cannot run; then the next.
 */
import { clock, limitGate, limitOf } from '../limits/hostLimits.ts';
import { limitKeyOf } from '../limits/runLimit.ts';
import type { AgentRole, RunConfig } from '../runs/runConfig.ts';

/** A probe this process took for a preset (its limit key), at `at`. */
export interface TakenProbe {
  readonly key: string;
  readonly at: string;
}

export type CommandChoice =
  /**
   * Start this command; `instead` says why an earlier one was passed over (null for the first);
   * `probe`: the probe taken for it past its preset's reset (given back if no run starts), else null.
   */
  | {
      readonly kind: 'run';
      readonly command: readonly string[];
      readonly instead: string | null;
      readonly probe: TakenProbe | null;
    }
  /** Every configured preset is limited: start nothing, say why and until when. */
  | { readonly kind: 'wait'; readonly reason: string; readonly until: string | null }
  /** None can run at all: the first one's reason (the epic waits for a person, as without fallbacks). */
  | { readonly kind: 'unavailable'; readonly command: readonly string[]; readonly reason: string };

/** The role's commands in order: its own, then its fallbacks. */
export function commandsOf(config: RunConfig, role: AgentRole): (readonly string[])[] {
  const first = config.roles[role];
  return [...(first ? [first] : []), ...(config.fallbacks?.[role] ?? [])].filter((c) => c.length > 0);
}

/**
 * Picks the command to start for `role`. A limited preset is passed over until its reset, and after
 * it only the one probe run goes (limitGate claims it); a preset that cannot run (`unavailable`
 * gives why, or null) is passed over when another can. `holdMs`: how long a probe is held at most.
 */
export async function chooseCommand(
  config: RunConfig,
  role: AgentRole,
  env: NodeJS.ProcessEnv,
  unavailable: (command: readonly string[]) => Promise<string | null>,
  holdMs: number,
  now: Date = new Date(),
): Promise<CommandChoice | null> {
  const commands = commandsOf(config, role);
  if (commands.length === 0) return null;
  const passed: string[] = [];
  const waits: { reason: string; until: string | null }[] = [];
  let firstUnavailable: { command: readonly string[]; reason: string } | null = null;
  for (const command of commands) {
    const key = limitKeyOf(command);
    const limit = limitOf(env, key);
    if (limit && Date.parse(limit.until) > now.getTime()) {
      const reason = `${key} limited until ${clock(limit.until, now)}`;
      waits.push({ reason, until: limit.until });
      passed.push(reason);
      continue;
    }
    const why = await unavailable(command);
    if (why !== null) {
      firstUnavailable ??= { command, reason: why };
      passed.push(`${key} cannot run: ${why}`);
      continue;
    }
    const gate = limitGate(env, key, process.pid, holdMs, now);
    if (gate.kind === 'wait') {
      waits.push({ reason: gate.reason, until: null });
      passed.push(gate.reason);
      continue;
    }
    const probe = gate.kind === 'probe' ? { key, at: gate.at } : null;
    return { kind: 'run', command, instead: passed.length > 0 ? passed.join('; ') : null, probe };
  }
  if (waits.length > 0) {
    const untils = waits
      .map((w) => w.until)
      .filter((u): u is string => u !== null)
      .sort();
    return { kind: 'wait', reason: `waiting: ${waits.map((w) => w.reason).join('; ')}`, until: untils[0] ?? null };
  }
  return firstUnavailable ? { kind: 'unavailable', ...firstUnavailable } : null;
}

/** A role whose preset is limited on this host, as a person is told it (`epic show`, the editor). */
export interface RoleLimit {
  readonly role: AgentRole;
  /** The role's first preset, the one that is limited. */
  readonly preset: string;
  /** "waiting: claude limited until 14:05", or "claude limited until 14:05; runs on opencode". */
  readonly message: string;
  /** The first preset's reset (ISO 8601). */
  readonly until: string;
  /** The preset the role runs on meanwhile, or null when every one of its presets is limited. */
  readonly runs_on: string | null;
}

/** The configured roles whose first preset is limited on this host now. */
export function roleLimits(config: RunConfig, env: NodeJS.ProcessEnv, now: Date = new Date()): RoleLimit[] {
  const out: RoleLimit[] = [];
  for (const role of Object.keys(config.roles) as AgentRole[]) {
    const keys = commandsOf(config, role).map(limitKeyOf);
    const limited = keys.map((k) => limitOf(env, k)).map((l) => (l && Date.parse(l.until) > now.getTime() ? l : null));
    const first = limited[0];
    if (!first) continue;
    const runsOn = keys.find((_, i) => limited[i] === null) ?? null;
    const what = `${first.preset} limited until ${clock(first.until, now)}`;
    out.push({
      role,
      preset: first.preset,
      message: runsOn ? `${what}; runs on ${runsOn}` : `waiting: ${what}`,
      until: first.until,
      runs_on: runsOn,
    });
  }
  return out;
}
