import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import {
  approveWithHandoff,
  describeDrift,
  parsePlan,
  type PlanStructure,
  type PlanVersionRow,
  UsageError,
} from '../../core/index.ts';
import { int, str } from '../args.ts';
import { arg, EPIC_ARG, type Command } from '../command.ts';
import { output } from '../output.ts';
import { byEarlierRun, withHandOver } from '../pending.ts';
import { planningStore } from '../planning.ts';

const VERSION_OPTION = {
  name: 'version',
  type: 'int',
  placeholder: 'N',
  description: 'the plan version (default: the latest proposed)',
} as const;

export const planPropose: Command = {
  name: 'plan propose',
  summary: "record a plan file as a new proposed version of an epic's plan",
  positionals: [EPIC_ARG, { name: 'plan', required: true, description: 'the plan file (markdown)' }],
  options: [],
  details:
    'On PostgreSQL, a proposal whose reply was lost (exit 3) is picked up by running the same command again (resumed=true), not made a second version.',
  async run(ctx) {
    const source = ctx.planSource(arg(ctx, 1));
    const body = readFileSync(resolve(ctx.location.worktreeRoot ?? ctx.cwd, source.planPath), 'utf8');
    const epicId = arg(ctx, 0);
    // A proposal whose reply an earlier process lost is looked up before another version is made (docs/postgres-design.md, "Failures, retries, idempotence").
    const r = await withHandOver(ctx, 'plan propose', { epic: epicId, plan: source.planPath }, (resume) =>
      planningStore(ctx, 'create').proposePlan(epicId, { ...source, body }, ctx.actor, resume ? { resume } : {}),
    );
    const changes = r.changes_since_previous.length
      ? `\n  changes since v${r.version - 1}: ${r.changes_since_previous.join('; ')}`
      : '';
    return output(
      r,
      `Proposed ${r.plan_path} as version ${r.version} of ${r.epic_id}'s plan (planning iteration ${r.plan_iteration})${byEarlierRun(r)}${changes}\nnext (a person): springfield plan approve ${r.epic_id}`,
    );
  },
};

export const planApprove: Command = {
  name: 'plan approve',
  summary:
    'approve the proposed plan (as stored, from any worktree): create its steps, render the handoff TODO-<epic>.md, epic → ready',
  positionals: [
    EPIC_ARG,
    {
      name: 'plan',
      required: false,
      description: 'a plan file that must match the proposal (default: the stored proposal itself)',
    },
  ],
  options: [VERSION_OPTION],
  details:
    "The stored proposal is approved as proposed; a file given must still have its structure. A planner agent never approves its own plan.\nThe handoff is kept beside the database and committed on the epic's branch when it starts; nothing is written into this worktree.",
  async run(ctx) {
    const store = planningStore(ctx, 'write');
    const epicId = arg(ctx, 0);
    // Without a file, the stored proposal is what is approved, from any worktree (the planner's own worktree is gone).
    const given = ctx.args.positionals[1];
    const r = await approveWithHandoff(
      store,
      epicId,
      given ? ctx.planSource(given) : null,
      ctx.actor,
      ctx.dbPath,
      int(ctx.args, 'version'),
    );
    const handoff = { path: r.handoff_path, written: r.handoff_written };
    const text = [
      `Approved version ${r.version} of ${r.epic_id}'s plan (${r.plan_path})`,
      `  ${r.init.steps_created} steps, ${r.init.checklist_items_created} checklist items${r.init.reinitialized ? `, ${r.init.steps_kept_completed} completed steps kept` : ''}`,
      `  handoff ${handoff.written ? 'rendered' : 'not rendered'}: ${handoff.path} (committed on springfield/${r.epic_id} when the epic starts; never into main)`,
      `  epic ${r.transition.from} → ${r.transition.to}`,
    ].join('\n');
    return output(r, text);
  },
};

export const planRequestChanges: Command = {
  name: 'plan request-changes',
  summary: 'send the proposed plan back to the planner with feedback',
  positionals: [EPIC_ARG],
  options: [
    {
      name: 'feedback',
      type: 'string',
      placeholder: 'TEXT',
      description: "what to change (shown in the planner's context)",
    },
    VERSION_OPTION,
  ],
  async run(ctx) {
    const feedback = str(ctx.args, 'feedback');
    if (!feedback || feedback.trim() === '')
      throw new UsageError('missing_value', "'plan request-changes' needs --feedback TEXT");
    const r = await planningStore(ctx, 'write').requestChanges(
      arg(ctx, 0),
      feedback,
      ctx.actor,
      int(ctx.args, 'version'),
    );
    return output(versionJson(r), `Requested changes to version ${r.version} of ${r.epic_id}'s plan`);
  },
};

export const planDiscard: Command = {
  name: 'plan discard',
  summary: 'discard the proposed plan version: the epic is deferred (debt register) until a person resumes it',
  positionals: [EPIC_ARG],
  options: [VERSION_OPTION, { name: 'reason', type: 'string', placeholder: 'TEXT', description: 'why, recorded' }],
  async run(ctx) {
    const r = await planningStore(ctx, 'write').discardPlan(
      arg(ctx, 0),
      ctx.actor,
      int(ctx.args, 'version'),
      str(ctx.args, 'reason') ?? null,
    );
    const { transition, ...row } = r;
    return output(
      { ...versionJson(row), transition },
      `Discarded version ${r.version} of ${r.epic_id}'s plan; ${r.epic_id}: ${transition.from} → ${transition.to} (in the debt register)\nNo planner starts for it until a person resumes it: springfield epic resume ${r.epic_id}`,
    );
  },
};

export const planNote: Command = {
  name: 'plan note',
  summary: 'record what the planner found while researching an epic (shown to her next session)',
  positionals: [EPIC_ARG],
  options: [
    { name: 'summary', type: 'string', placeholder: 'TEXT', description: 'what was found (cut to 2000 characters)' },
    { name: 'kind', type: 'string', placeholder: 'KIND', description: 'a lowercase word (default research)' },
  ],
  async run(ctx) {
    const summary = str(ctx.args, 'summary');
    const kind = str(ctx.args, 'kind') ?? 'research';
    if (!/^[a-z][a-z0-9_]{0,39}$/.test(kind))
      throw new UsageError('bad_option', `--kind needs a lowercase word like research, got '${kind}'`);
    if (!summary || summary.trim() === '') throw new UsageError('missing_value', "'plan note' needs --summary TEXT");
    const store = planningStore(ctx, 'write');
    const n = await store.recordPlanningNote(arg(ctx, 0), kind, summary, ctx.actor);
    return output({ epic_id: arg(ctx, 0), ...n }, `Recorded ${n.kind} note #${n.id} on ${arg(ctx, 0)}`);
  },
};

export const planShow: Command = {
  name: 'plan show',
  summary: "an epic's plan versions, one version's text and what changed since the previous one",
  positionals: [EPIC_ARG],
  options: [
    { name: 'version', type: 'int', placeholder: 'N', description: 'the version to show (default: the latest)' },
  ],
  async run(ctx) {
    const versions = await planningStore(ctx, 'read').planVersions(arg(ctx, 0));
    const wanted = int(ctx.args, 'version');
    const chosen = wanted === undefined ? versions.at(-1) : versions.find((v) => v.version === wanted);
    if (wanted !== undefined && !chosen)
      throw new UsageError('unknown_version', `${arg(ctx, 0)} has no plan version ${wanted}`);
    const previous = chosen ? versions.filter((v) => v.version < chosen.version).at(-1) : undefined;
    const changes =
      chosen && previous
        ? describeDrift(JSON.parse(previous.structure) as PlanStructure, JSON.parse(chosen.structure) as PlanStructure)
        : [];
    const json = {
      epic_id: arg(ctx, 0),
      versions: versions.map(versionJson),
      version: chosen
        ? {
            ...versionJson(chosen),
            body: chosen.body,
            title: parsePlan(chosen.body, chosen.plan_path).title,
            changes_since_previous: changes,
          }
        : null,
    };
    const text = chosen
      ? [
          `${json.epic_id} plan v${chosen.version} of ${versions.length} [${chosen.status}] ${chosen.plan_path}`,
          ...(changes.length ? ['Changes since v' + previous?.version + ':', ...changes.map((c) => `  ${c}`)] : []),
          '',
          chosen.body,
        ].join('\n')
      : `${json.epic_id} has no plan versions yet`;
    return output(json, text);
  },
};

function versionJson({ body: _b, structure: _s, ...v }: PlanVersionRow) {
  return v;
}
