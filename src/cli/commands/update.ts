import {
  ITEM_STATUSES,
  type ItemChange,
  type ItemKind,
  type ItemStatus,
  type UpdateResult,
  UsageError,
  type StepStore,
} from '../../core/index.ts';
import { pairs, str, wholeNumber, type OptionSpec, type ParsedArgs } from '../args.ts';
import { arg, PLAN_ARG, STEP_ARG, TOKEN_OPTION, type Command } from '../command.ts';
import { output } from '../output.ts';

const KINDS: readonly ItemKind[] = ['task', 'test', 'checkpoint'];
const one = (kind: ItemKind): OptionSpec => ({
  name: kind,
  type: 'string',
  arity: 2,
  placeholder: 'N STATUS',
  description: `set ${kind} N (0-based) to open|in_progress|completed`,
});
const every = (kind: ItemKind): OptionSpec => ({
  name: `all-${kind}s`,
  type: 'string',
  placeholder: 'STATUS',
  description: `set every ${kind} of the step`,
});

export const updateCommand: Command<StepStore> = {
  name: 'update',
  summary: 'set checklist items of a step you hold',
  positionals: [PLAN_ARG, STEP_ARG],
  options: [
    ...KINDS.map(one),
    ...KINDS.map(every),
    {
      name: 'item',
      type: 'string',
      arity: 2,
      placeholder: 'ID STATUS',
      description: 'set the item with this id (see show --json)',
    },
    { name: 'all', type: 'string', placeholder: 'STATUS', description: 'set every item of the step' },
    TOKEN_OPTION,
  ],
  details: [
    'Repeat options to change several items at once, e.g. --task 0 completed --test 1 in_progress.',
    "update only sets items, never a step's status, for steps and substeps alike: 'complete' completes a step",
    'with its substeps (or a substep on its own), so ticking the last box of a substep leaves it claimed.',
  ].join('\n'),
  async run(ctx) {
    const changes = itemChanges(ctx.args);
    const source = ctx.currentPlanSource(arg(ctx, 0));
    const r = await ctx.store('write').updateItems(source, arg(ctx, 1), changes, ctx.actor);
    return output(r, summary(r));
  },
};

function itemChanges(args: ParsedArgs): ItemChange[] {
  const changes: ItemChange[] = [];
  for (const kind of KINDS) {
    for (const [n, s] of pairs(args, kind))
      changes.push({ selector: { kind, ordinal: whole(n as string, `--${kind}`) }, status: status(s as string) });
    const all = str(args, `all-${kind}s`);
    if (all !== undefined) changes.push({ selector: { kind, ordinal: 'all' }, status: status(all) });
  }
  for (const [id, s] of pairs(args, 'item'))
    changes.push({ selector: { id: whole(id as string, '--item') }, status: status(s as string) });
  const all = str(args, 'all');
  if (all !== undefined) changes.push({ selector: { all: true }, status: status(all) });
  if (changes.length === 0)
    throw new UsageError(
      'missing_argument',
      "'update' needs at least one change, e.g. --task 0 completed or --all completed",
    );
  return changes;
}

function whole(text: string, option: string): number {
  return wholeNumber(text, `${option} ${option === '--item' ? 'ID' : 'N'}`);
}

function status(text: string): ItemStatus {
  if (!(ITEM_STATUSES as readonly string[]).includes(text))
    throw new UsageError('bad_option', `unknown item status '${text}' (use ${ITEM_STATUSES.join(', ')})`);
  return text as ItemStatus;
}

function summary(r: UpdateResult): string {
  const c = (k: { completed: number; open: number; in_progress: number }) =>
    `${k.completed}/${k.completed + k.open + k.in_progress}`;
  return `Updated ${r.updated} item${r.updated === 1 ? '' : 's'} of ${r.step_anchor}: tasks ${c(r.tasks)}, tests ${c(r.tests)}, checkpoints ${c(r.checkpoints)}`;
}
