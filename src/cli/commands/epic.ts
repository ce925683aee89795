import { isUtf8 } from 'node:buffer';
import { appendFileSync, existsSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import {
  allowedEvents,
  budgetLine,
  COMPLEXITY_POLICY,
  epicConflictsAhead,
  conflictRate,
  type Planner,
  PLANNERS,
  configPathFor,
  type EpicRow,
  firstBadUtf8Line,
  isEpicStatus,
  isRetryable,
  loadRoleCommands,
  parseComplexity,
  parsePriority,
  startEpicInWorktree,
  transition,
  UsageError,
} from '../../core/index.ts';
import { flag, int, str } from '../args.ts';
import { arg, EPIC_ARG, type Command } from '../command.ts';
import type { CliContext } from '../cliContext.ts';
import { output } from '../output.ts';
import { renderEpic, renderEpicLine } from '../render/epicText.ts';
import { byEarlierRun, withHandOver } from '../pending.ts';
import { holdsOf, limitsOf, planningStore, retriesOf, worktreeLocation } from '../planning.ts';
import { REVIEWING_ROLE } from '../../shared/roles.ts';
import { budgetJson, budgetOf, budgetOptions, checkBudgetBeforeRetry } from './epicBudget.ts';

export { epicBudget } from './epicBudget.ts';

export const epicCreate: Command = {
  name: 'epic create',
  summary: 'create an epic (status planned) with a short id; complexity detected from title and brief',
  positionals: [{ name: 'title', required: true, description: 'what the epic delivers' }],
  options: [
    {
      name: 'brief',
      type: 'string',
      placeholder: 'FILE|TEXT',
      description: "Marge's brief: intent and acceptance criteria (a file path or the text)",
    },
    { name: 'priority', type: 'string', placeholder: 'P0-P3', description: 'priority (default P2)' },
    {
      name: 'complexity',
      type: 'string',
      placeholder: 'LEVEL',
      description: 'trivial|simple|standard|critical (default: detected)',
    },
    {
      name: 'max-iterations',
      type: 'int',
      placeholder: 'N',
      description: "override the complexity's build-iteration budget",
    },
    { name: 'plan-md', type: 'boolean', description: "add the epic to PLAN.md with its '**springfield:** `id`' line" },
    {
      name: 'budget-usd',
      type: 'string',
      placeholder: 'N',
      description:
        'its own cost budget in dollars (default: "budget": {"epicUsd"} of .springfield/config.json); raise it later with epic budget',
    },
    {
      name: 'budget-tokens',
      type: 'string',
      placeholder: 'N',
      description: 'its own token budget (in + out; default "epicTokens")',
    },
    {
      name: 'budget-minutes',
      type: 'string',
      placeholder: 'N',
      description: 'its own budget of agent minutes for runs that report no cost (default "epicMinutes")',
    },
    {
      name: 'planner',
      type: 'string',
      placeholder: 'WHO',
      description:
        'who writes its plan: lisa (the scheduler starts her) or person (you; the scheduler never plans it). Default: "planner" of .springfield/config.json, else lisa',
    },
  ],
  details: [
    'On PostgreSQL, an epic whose reply was lost (exit 3) is picked up by running the same command again (resumed=true), not created twice.',
    'With --planner person the scheduler never starts Lisa for the epic, re-plans included: you propose its plans (springfield plan propose).',
  ].join('\n'),
  async run(ctx) {
    const title = arg(ctx, 0).trim();
    if (title === '') throw new UsageError('missing_argument', 'an epic needs a non-empty title');
    const priority = parsePriority(str(ctx.args, 'priority') ?? 'P2');
    const level = str(ctx.args, 'complexity');
    const complexity = level !== undefined ? parseComplexity(level) : undefined;
    const max = int(ctx.args, 'max-iterations');
    if (max === 0) throw new UsageError('bad_option', '--max-iterations must be at least 1');
    const brief = readBrief(ctx, str(ctx.args, 'brief'));
    const budget = budgetOptions(ctx, 'budget-');
    const planner = plannerOf(str(ctx.args, 'planner') ?? loadRoleCommands(configPathFor(ctx.stateFile)).planner);
    const planMd = flag(ctx.args, 'plan-md')
      ? join(ctx.location.mainRoot ?? ctx.location.worktreeRoot ?? ctx.cwd, 'PLAN.md')
      : undefined;
    // An epic whose reply an earlier process lost is looked up before another is created (docs/postgres-design.md, "Failures, retries, idempotence").
    const epic = await withHandOver(ctx, 'epic create', {}, (resume) =>
      planningStore(ctx, 'create').createEpic(
        {
          title,
          brief,
          priority,
          complexity,
          maxIterations: max,
          planner,
          ...(Object.keys(budget).length > 0 ? { budget } : {}),
        },
        ctx.actor,
        resume ? { resume } : {},
      ),
    );
    if (planMd) appendFileSync(planMd, planMdEntry(epic, existsSync(planMd) ? readFileSync(planMd, 'utf8') : ''));
    return output(
      { ...epicJson(epic), plan_md: planMd ?? null },
      `Created ${epic.id}: ${epic.title}${byEarlierRun(epic)} [${epic.status}] · ${epic.complexity}${epic.complexity_source === 'detected' ? ' (detected)' : ''} · ${epic.priority}` +
        (planMd ? `\nAdded to ${planMd}` : '') +
        (ctx.gitignoreAdded ? '\nAdded .springfield/ to .gitignore' : '') +
        `\nnext: ${nextForPlanner(epic.id, epic.planner)}`,
    );
  },
};

function plannerOf(value: string): Planner {
  const planner = PLANNERS.find((p) => p === value);
  if (!planner) throw new UsageError('bad_option', `--planner must be lisa or person, got '${value}'`);
  return planner;
}

/** What happens next, as it really will (docs/lifecycle.md, "Who plans"). */
function nextForPlanner(id: string, planner: Planner): string {
  return planner === 'person'
    ? `write its plan and propose it: springfield plan propose ${id} <plan.md> (the scheduler will not plan it)`
    : `Lisa writes its plan when the scheduler runs (springfield orchestrate --watch); a plan you propose yourself counts too: springfield plan propose ${id} <plan.md>`;
}

function readBrief(ctx: CliContext, value: string | undefined): string {
  if (value === undefined) return '';
  const path = resolve(ctx.cwd, value);
  if (value.length < 4096 && existsSync(path) && statSync(path).isFile()) {
    const bytes = readFileSync(path);
    if (!isUtf8(bytes))
      throw new UsageError('bad_brief', `${value}:${firstBadUtf8Line(bytes)}: brief file is not valid UTF-8`);
    return bytes.toString('utf8').trim();
  }
  return value.trim();
}

function planMdEntry(epic: EpicRow, current: string): string {
  const lead = current === '' ? '# Plan\n' : current.endsWith('\n') ? '' : '\n';
  const firstParagraph = epic.brief.split(/\n\s*\n/)[0]?.trim();
  return `${lead}\n### ${epic.title}\n**springfield:** \`${epic.id}\`\n${firstParagraph ? `\n${firstParagraph}\n` : ''}`;
}

export function epicJson(e: EpicRow) {
  const policy = COMPLEXITY_POLICY[e.complexity];
  return {
    ...e,
    build_budget: e.max_iterations ?? policy.buildIterations,
    plan_budget: policy.planIterations,
    review: policy.review,
    person_approval_before_merge: policy.personApprovalBeforeMerge,
    allowed_events: allowedEvents(e.status),
  };
}

export const epicList: Command = {
  name: 'epic list',
  summary: 'list epics with status, complexity and progress',
  positionals: [],
  options: [{ name: 'status', type: 'string', placeholder: 'STATUS', description: 'only epics in this status' }],
  async run(ctx) {
    const status = str(ctx.args, 'status');
    if (status !== undefined && !isEpicStatus(status))
      throw new UsageError('bad_option', `unknown epic status '${status}'`);
    const store = planningStore(ctx, 'read');
    const epics = await store.listEpics(status);
    const plans = await store.showPlans();
    const progress = (id: string) => plans.find((p) => p.epic_id === id)?.progress;
    const rows = epics.map((e) => ({ ...epicJson(e), progress: progress(e.id) ?? null }));
    return output(
      { epics: rows },
      rows.length === 0
        ? 'No epics yet. Create one with \'springfield epic create "title"\'.'
        : rows.map((r) => renderEpicLine(r, r.progress)).join('\n'),
    );
  },
};

export const epicShow: Command = {
  name: 'epic show',
  summary: 'an epic: status, complexity and budgets, plan versions, progress, signals, allowed events',
  positionals: [EPIC_ARG],
  options: [],
  async run(ctx) {
    const store = planningStore(ctx, 'read');
    const epic = await store.getEpic(arg(ctx, 0));
    const versions = (await store.planVersions(epic.id)).map(({ body: _b, structure: _s, ...v }) => v);
    const plan = (await store.showPlans()).find((p) => p.epic_id === epic.id) ?? null;
    const signals = await store.signals(epic.id);
    const blocked = await store.blockDetails(epic.id);
    const runs = await store.runs({ epicId: epic.id, limit: 5 });
    const recent = runs.map((r) => ({
      id: r.id,
      role: r.role,
      step_anchor: r.step_anchor,
      status: r.status,
      exit_code: r.exit_code,
      outcome_reason: r.outcome_reason,
      started_at: r.started_at,
      ended_at: r.ended_at,
    }));
    const retries = await retriesOf(ctx, store, epic.id);
    // Computed from git now (docs/files.md, "Conflict ahead"): the store keeps none of it.
    const conflicts = await epicConflictsAhead(store, ctx.location.mainRoot, epic.id);
    // The conflicts its merges met and who resolved them, from the event log (docs/files.md).
    const rate = conflictRate(await store.events({ epicId: epic.id }));
    // Spend against budget (docs/budgets.md): the runs' recorded usage, the epic's own limits, the config's.
    const view = await budgetOf(ctx, store, epic);
    // Whose review it is: Bart's, or the person's where the config's "reviewedByPerson" lists its complexity.
    const byPerson = loadRoleCommands(configPathFor(ctx.stateFile)).reviewedByPerson?.includes(epic.complexity);
    const json = {
      ...epicJson(epic),
      reviewer: byPerson ? 'person' : REVIEWING_ROLE,
      plan_versions: versions,
      plan: plan ? { plan_path: plan.plan_path, status: plan.status, progress: plan.progress } : null,
      signals,
      blocked_by: blocked,
      retries,
      limits: limitsOf(ctx, epic.status),
      // What the scheduler would hold it back for now: the same words its pass and the editor's row give.
      waiting: (await holdsOf(ctx, store, epic.id, epic.status)).map(({ kind, message, until }) => ({
        kind,
        message,
        until,
      })),
      recent_runs: recent,
      conflicts_ahead: conflicts,
      conflicts_at_merge: rate,
      budget: budgetJson(view),
    };
    return output(json, renderEpic({ ...json, budget_line: budgetLine(view) }));
  },
};

function transitionCommand(name: 'defer' | 'resume' | 'retry', summary: string, details?: string): Command {
  return {
    name: `epic ${name}`,
    summary,
    positionals: [EPIC_ARG],
    options: [{ name: 'reason', type: 'string', placeholder: 'TEXT', description: 'why, recorded in the event log' }],
    ...(details ? { details } : {}),
    async run(ctx) {
      const store = planningStore(ctx, 'write');
      const id = arg(ctx, 0);
      // Resuming an epic a fault blocked is what a person means by retrying it.
      const epic = await store.getEpic(id);
      const event = name === 'resume' && isRetryable(epic) ? 'retry' : name;
      // A paused epic whose budget is still spent would be paused again before any run: raise it first.
      if (event === 'retry') await checkBudgetBeforeRetry(ctx, store, epic);
      const done = { defer: 'deferred', resume: 'resumed', retry: 'retried' }[event];
      const r = await store.applyEpicEvent(
        id,
        event,
        ctx.actor,
        str(ctx.args, 'reason') ?? `${done} by ${ctx.actor.agent ?? 'a person'}`,
      );
      const next =
        event === 'retry'
          ? "\nThe scheduler starts it again on its next pass (springfield orchestrate, or the editor's scheduler)."
          : '';
      return output(r, `${r.epic_id}: ${r.from} → ${r.to}${next}`);
    },
  };
}

export const epicStart: Command = {
  name: 'epic start',
  summary: 'start an approved epic (ready → in_progress) in a worktree of its own, as the scheduler does',
  positionals: [EPIC_ARG],
  options: [
    {
      name: 'worktrees',
      type: 'string',
      placeholder: 'DIR',
      description: 'where epic worktrees go, if not "worktreeRoot" in config.json (default: <repo>.springfield/)',
    },
  ],
  details: [
    "The epic's work happens on branch springfield/<epic> in its own worktree (<repo>.springfield/<epic>), made now with",
    'the approved plan and the handoff committed there; your checkout stays as it is. Build a step there (cd into it),',
    'or check out the branch in a checkout of your own. Refused when the plan no longer has the approved structure,',
    'or when the branch is checked out in another worktree.',
  ].join('\n'),
  async run(ctx) {
    const store = planningStore(ctx, 'write');
    const id = arg(ctx, 0);
    transition((await store.getEpic(id)).status, 'start');
    const mainRoot = ctx.location.mainRoot;
    if (!mainRoot) throw new UsageError('no_worktree', 'epic start needs a repository with a main worktree');
    const { transition: r, worktree } = await startEpicInWorktree(
      store,
      mainRoot,
      id,
      ctx.actor,
      worktreeLocation(ctx),
    );
    return output(
      { ...r, worktree_path: worktree.path, branch: worktree.branch },
      `${r.epic_id}: ${r.from} → ${r.to}${r.reason ? ` (${r.reason})` : ''} · iteration ${r.iteration}\nits work happens in ${worktree.path} on ${worktree.branch}: cd there to claim and build a step`,
    );
  },
};

export const epicFinish: Command = {
  name: 'epic finish',
  summary:
    'mark an in-progress epic implemented once all its steps are completed and verification passed (hands it to review)',
  positionals: [EPIC_ARG],
  options: [{ name: 'reason', type: 'string', placeholder: 'TEXT', description: 'e.g. the verification evidence' }],
  async run(ctx) {
    // The scheduler's rule: with verification configured, it must have passed after the latest build.
    const verificationConfigured = loadRoleCommands(configPathFor(ctx.dbPath)).verification.length > 0;
    const r = await planningStore(ctx, 'write').finishEpic(
      arg(ctx, 0),
      ctx.actor,
      str(ctx.args, 'reason') ?? 'all steps completed',
      { verificationConfigured },
    );
    return output(r, `${r.epic_id}: ${r.from} → ${r.to}${r.next_role ? ` · next: ${r.next_role}` : ''}`);
  },
};

export const epicApproveMerge: Command = {
  name: 'epic approve-merge',
  summary: "a person's approval to merge (critical epics need it before Lovejoy merges)",
  positionals: [EPIC_ARG],
  options: [],
  async run(ctx) {
    const e = await planningStore(ctx, 'write').approveMerge(arg(ctx, 0), ctx.actor);
    return output(epicJson(e), `${e.id}: merge approved by ${e.merge_approved_by}`);
  },
};

export const epicDefer = transitionCommand('defer', 'set an epic aside (any status but done)');
export const epicResume = transitionCommand(
  'resume',
  'bring a deferred epic back to planned (an epic blocked by agent_failed or plan_drift: retry it)',
);
export const epicRetry = transitionCommand(
  'retry',
  'retry an epic blocked by agent_failed, plan_drift or budget_exhausted: back to the status it was blocked from',
  "The failing role runs again on the scheduler's next pass, its count of failures in a row starting over (fix the cause first: a missing\nAPI key, a broken setup command, the drifted plan file). An epic paused by its cost budget (budget_exhausted) is retried\nonce its budget is raised above what it spent (springfield epic budget <epic> --usd N; docs/budgets.md); until then the\nretry is refused. Other blocks (a review signal, a spent build-iteration budget) need a new plan instead.",
);
