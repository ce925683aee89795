/**
 * The one place a run's preset is chosen by its outcomes (docs/agents.md, "Routing"): for a builder
 * whose config routes it between presets, the ledger's standings for the step's kind decide
 * (src/core/runs/routing.ts), the choice is recorded with its reason, and the preset's argv is run.
 * A preset limited on this host is passed over until its reset, and after it only the one probe
 * goes (limitGate claims it, as for a role's fallbacks): the next choice passes it over while the probe is out.
 */
import { ROLE_NAMES } from '../epics/transitions.ts';
import { clock, giveBackProbe, limitedUntil, limitGate } from '../limits/hostLimits.ts';
import { limitKeyOf } from '../limits/runLimit.ts';
import { chooseRoute, type RouteChoice } from '../runs/routing.ts';
import { findPreset } from '../runs/presets.ts';
import type { AgentRole, RunConfig } from '../runs/runConfig.ts';
import { buildLedger, presetStandings } from '../stats/index.ts';
import { filesOf, stepArea } from '../stats/stepKind.ts';
import type { Actor, Store } from '../store/index.ts';
import { BUILDING_ROLE } from '../../shared/roles.ts';
import type { TakenProbe } from './presetChoice.ts';

export interface RouteContext {
  readonly store: Store;
  readonly config: RunConfig;
  readonly actor: Actor;
  /** Why a preset's CLI cannot run now (the scheduler's preflight), or null. */
  readonly unavailable: (argv: readonly string[]) => Promise<string | null>;
  /** Where the host's limits are kept (the user's state folder), and how long a probe is held at most. */
  readonly env: NodeJS.ProcessEnv;
  readonly holdMs: number;
}

/** The routed argv for this run and the choice, or null when the role is not routed (its configured command runs). */
export async function routedCommand(
  c: RouteContext,
  role: AgentRole,
  epicId: string,
  stepAnchor: string | null,
): Promise<{ command: readonly string[]; choice: RouteChoice; probe: TakenProbe | null } | null> {
  const route = role === BUILDING_ROLE ? c.config.routes?.ralph : undefined;
  if (!route || !stepAnchor) return null;
  const rows = await c.store.statsRows(null);
  const step = rows.steps.filter((s) => s.epic_id === epicId && s.anchor === stepAnchor).at(-1);
  const kind = step ? stepArea(filesOf(step.files), step.title) : 'code';
  const argvOf = (id: string) => findPreset(id)?.roles[BUILDING_ROLE];
  const why = new Map<string, string | null>();
  for (const id of route.presets) {
    const argv = argvOf(id);
    const until = argv ? limitedUntil(c.env, limitKeyOf(argv)) : null;
    why.set(id, !argv ? 'no builder command' : until ? `limited until ${clock(until)}` : await c.unavailable(argv));
  }
  const standings = presetStandings(buildLedger(rows), kind);
  let choice: RouteChoice | null = null;
  let command: readonly string[] | undefined;
  let probe: TakenProbe | null = null;
  // The chosen preset must win its start: past a limit's reset only one probe goes, so while another's is out it is passed over.
  for (let tries = 0; tries < route.presets.length && !command; tries++) {
    choice = chooseRoute({
      roleName: ROLE_NAMES[role],
      kind,
      presets: route.presets,
      by: route.by ?? 'acceptance',
      standings,
      unavailable: (id) => why.get(id) ?? null,
    });
    const argv = choice ? argvOf(choice.preset) : undefined;
    if (!choice || !argv) return null;
    const gate = limitGate(c.env, limitKeyOf(argv), process.pid, c.holdMs);
    if (gate.kind === 'wait') why.set(choice.preset, gate.reason);
    else {
      command = argv;
      probe = gate.kind === 'probe' ? { key: limitKeyOf(argv), at: gate.at } : null;
    }
  }
  if (!choice || !command) return null;
  try {
    await c.store.recordRoute(epicId, stepAnchor, c.actor, choice.reason, {
      role,
      preset: choice.preset,
      kind,
      by: route.by ?? 'acceptance',
      explored: choice.explored,
    });
  } catch (err) {
    if (probe) giveBackProbe(c.env, probe.key, process.pid, probe.at);
    throw err;
  }
  return { command, choice, probe };
}
