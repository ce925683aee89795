import { allowWrittenConfig, configPathFor, loadRoleCommands, trustStatus, trustTargetFor } from '../../core/index.ts';
import { routeFor, writeRoute } from '../../core/agents/routeConfig.ts';
import { ROLE_NAMES } from '../../core/epics/transitions.ts';
import { routeLeader } from '../../core/runs/routing.ts';
import type { RouteConfig } from '../../core/runs/runConfig.ts';
import { buildLedger, presetStandings, STEP_AREAS } from '../../core/stats/index.ts';
import type { StatsRows } from '../../core/store/shared/stats.ts';
import { BUILDING_ROLE } from '../../shared/roles.ts';
import { str } from '../args.ts';
import { type Command } from '../command.ts';
import type { CliContext } from '../cliContext.ts';
import { output } from '../output.ts';

const PRESET = (n: number, required: boolean) => ({
  name: `preset${n}`,
  required,
  description: n === 1 ? 'a preset to route between (claude, codex, …)' : 'another preset',
});

export const agentsRouteCommand: Command = {
  name: 'agents route',
  summary: 'route a role between presets per kind of step by their outcomes, or show the routing and who leads',
  positionals: [
    { name: 'role', required: false, description: `the role to route (${BUILDING_ROLE}); none: show the routing` },
    PRESET(1, false),
    PRESET(2, false),
    PRESET(3, false),
    PRESET(4, false),
  ],
  options: [
    {
      name: 'by',
      type: 'string',
      placeholder: 'WHAT',
      description:
        'acceptance (default: first-pass acceptance, cheaper per merged step on a tie) or cost (acceptance per dollar)',
    },
  ],
  details: [
    `Each step ${ROLE_NAMES[BUILDING_ROLE]} builds goes to one of the presets: one that has built no step of the step's kind`,
    '(docs, code, tests) goes first; then the one whose first-pass review acceptance may be highest (an upper bound that',
    "widens as the kind's history grows, so an unlucky start is tried again), the cheaper on a tie. Every choice is in the",
    'event log with its reason. A preset whose CLI cannot run now is skipped. See docs/stats.md, "Routing", and',
    'springfield stats --by preset.',
  ].join('\n'),
  async run(ctx) {
    const [role, ...presets] = ctx.args.positionals;
    const configPath = configPathFor(ctx.stateFile);
    if (role === undefined) {
      const route = loadRoleCommands(configPath).routes?.ralph;
      const lines = route ? await standingLines(ctx, route) : [];
      const text = route
        ? [
            `${ROLE_NAMES[BUILDING_ROLE]} is routed between ${route.presets.join(', ')} by ${route.by ?? 'acceptance'}:`,
            ...lines,
          ].join('\n')
        : `No role is routed. Route one: springfield agents route ${BUILDING_ROLE} claude codex`;
      return output({ routes: route ? { [BUILDING_ROLE]: route } : {}, standings: lines }, text);
    }
    const route = routeFor(role, presets, str(ctx.args, 'by'));
    const target = trustTargetFor(ctx.location, ctx.stateFile, ctx.env);
    const before = trustStatus(target);
    const written = writeRoute(configPath, route);
    const allowed = allowWrittenConfig(target, before, written.content);
    const lines = await standingLines(ctx, route);
    const text = [
      `${written.created ? 'Created' : 'Updated'} ${written.path}: ${ROLE_NAMES[BUILDING_ROLE]} routed between ${route.presets.join(', ')} by ${route.by ?? 'acceptance'}`,
      ...lines,
    ].join('\n');
    const warnings = allowed
      ? []
      : [
          `the rest of ${written.path} was not allowed by you, so nothing in it runs yet: review it with 'springfield allow'`,
        ];
    return output(
      { path: written.path, created: written.created, role, route, allowed, standings: lines },
      text,
      0,
      warnings,
    );
  },
};

/** Per kind of step, who leads now and on what record (no database yet: nothing to show). */
async function standingLines(ctx: CliContext, route: RouteConfig): Promise<string[]> {
  let rows: StatsRows;
  try {
    rows = await ctx.store('read').statsRows(null);
  } catch {
    return [];
  }
  const ledger = buildLedger(rows);
  return STEP_AREAS.flatMap((kind) => {
    const lead = routeLeader({
      roleName: ROLE_NAMES[BUILDING_ROLE],
      kind,
      presets: route.presets,
      by: route.by ?? 'acceptance',
      standings: presetStandings(ledger, kind),
    });
    return lead ? [`  ${lead.reason}`] : [];
  });
}
