import {
  isSignalType,
  SIGNAL_DECISIONS,
  SIGNAL_TYPES,
  type SignalDecision,
  type SignalLocation,
  UsageError,
} from '../../core/index.ts';
import { flag, str, wholeNumber } from '../args.ts';
import { arg, type Command } from '../command.ts';
import type { CliContext } from '../cliContext.ts';
import { output } from '../output.ts';
import { repoPlace, type CodePlace } from '../repoLocation.ts';
import { byEarlierRun, withHandOver } from '../pending.ts';
import { planningStore } from '../planning.ts';

export const signalCommand: Command = {
  name: 'signal',
  summary: "record Bart's typed review signal for an implemented epic and apply its transition",
  positionals: [{ name: 'epic', required: true, description: 'epic id' }],
  options: [
    { name: 'type', type: 'string', placeholder: 'TYPE', description: SIGNAL_TYPES.join('|') },
    { name: 'summary', type: 'string', placeholder: 'TEXT', description: 'the finding in one sentence' },
    {
      name: 'location',
      type: 'string',
      multiple: true,
      placeholder: 'FILE:LINE[:END]',
      description: 'a place in the code (repeatable); a following --note annotates it',
    },
    {
      name: 'file',
      type: 'string',
      multiple: true,
      placeholder: 'PATH',
      description: 'alternative to --location: a file, followed by --line N',
    },
    {
      name: 'line',
      type: 'string',
      multiple: true,
      placeholder: 'N[:END]',
      description: 'the line for the preceding --file',
    },
    {
      name: 'note',
      type: 'string',
      multiple: true,
      placeholder: 'TEXT',
      description: 'note for the preceding location',
    },
    {
      name: 'await-person',
      type: 'boolean',
      description: "store it for a person to decide ('signal decide'); the epic does not move yet",
    },
  ],
  details:
    'pass → verified · implementation_failure → in_progress (Ralph) · option_viability_failure / adr_invalidated → blocked (Lisa).\nThe signal and its transition are stored together or not at all.\nOn PostgreSQL, a signal whose reply was lost (exit 3) is picked up by running the same command again (resumed=true).',
  async run(ctx) {
    const type = str(ctx.args, 'type');
    if (!type || !isSignalType(type))
      throw new UsageError(
        'bad_option',
        `--type must be one of ${SIGNAL_TYPES.join(', ')}${type ? `, got '${type}'` : ''}`,
      );
    const summary = str(ctx.args, 'summary');
    if (!summary || summary.trim() === '') throw new UsageError('missing_value', "'signal' needs --summary TEXT");
    const locations = parseLocations(ctx);
    const epicId = arg(ctx, 0);
    // A signal whose reply an earlier process lost is looked up before another is recorded (docs/postgres-design.md, "Failures, retries, idempotence").
    const r = await withHandOver(ctx, 'signal', { epic: epicId }, (resume) =>
      planningStore(ctx, 'write').recordSignal(
        epicId,
        type,
        summary,
        locations,
        ctx.actor,
        flag(ctx.args, 'await-person'),
        resume ? { resume } : {},
      ),
    );
    const t = r.transition;
    const what = t
      ? `${t.from} → ${t.to}${t.next_role ? ` · next: ${t.next_role}` : ''}`
      : `awaiting a person's decision (springfield signal decide ${r.signal_id} --decision send-back|escalate|accept)`;
    return output(
      r,
      `Recorded ${r.type} #${r.signal_id} for ${r.epic_id} (${r.locations} location${r.locations === 1 ? '' : 's'})${byEarlierRun(r)}: ${what}`,
    );
  },
};

function parseLocations(ctx: CliContext): SignalLocation[] {
  const out: CodePlace[] = [];
  let pendingFile: string | null = null;
  for (const { name, values } of ctx.args.ordered) {
    const value = values[0] as string;
    if (name === 'location') {
      const m = /^(.+?):(\d+)(?::(\d+))?$/.exec(value);
      if (!m) throw new UsageError('bad_location', `--location needs FILE:LINE[:ENDLINE], got '${value}'`);
      out.push(repoPlace(ctx, m[1] as string, m[2] as string, m[3]));
    } else if (name === 'file') {
      pendingFile = value;
    } else if (name === 'line') {
      const m = /^(\d+)(?::(\d+))?$/.exec(value);
      if (!pendingFile || !m)
        throw new UsageError(
          'bad_location',
          pendingFile ? `--line needs N or N:END, got '${value}'` : '--line must follow --file PATH',
        );
      out.push(repoPlace(ctx, pendingFile, m[1] as string, m[2]));
      pendingFile = null;
    } else if (name === 'note') {
      const last = out.at(-1);
      if (!last) throw new UsageError('bad_location', '--note must follow a --location');
      if (last.note !== null)
        throw new UsageError('bad_location', `a location has two notes: ${last.file}:${last.line}`);
      last.note = value;
    }
  }
  if (pendingFile) throw new UsageError('bad_location', `--file ${pendingFile} needs a following --line N`);
  return out;
}

export const signalsCommand: Command = {
  name: 'signals',
  summary: 'list review signals with their locations (newest first)',
  positionals: [{ name: 'epic', required: false, description: 'only this epic' }],
  options: [{ name: 'open', type: 'boolean', description: 'only signals waiting for a person' }],
  async run(ctx) {
    const all = await planningStore(ctx, 'read').signals(ctx.args.positionals[0]);
    const signals = flag(ctx.args, 'open') ? all.filter((s) => s.status === 'awaiting_person') : all;
    const text =
      signals.length === 0
        ? 'No signals.'
        : signals
            .map((s) =>
              [
                `#${s.id} ${s.epic_id} ${s.type} — ${s.summary}${s.status === 'awaiting_person' ? ' (awaiting a person)' : s.resolution ? ` (${s.resolution})` : ''}`,
                ...s.locations.map(
                  (l) => `    ${l.file}:${l.line}${l.end_line ? `-${l.end_line}` : ''}${l.note ? `  ${l.note}` : ''}`,
                ),
              ].join('\n'),
            )
            .join('\n');
    return output({ signals }, text);
  },
};

export const signalDecide: Command = {
  name: 'signal decide',
  summary: "a person's decision on a signal awaiting one: send-back (Ralph), escalate (Lisa) or accept (pass)",
  positionals: [
    { name: 'signal', required: true, description: "the signal's number (see 'springfield signals --open')" },
  ],
  options: [
    { name: 'decision', type: 'string', placeholder: 'DECISION', description: 'send-back | escalate | accept' },
    { name: 'note', type: 'string', placeholder: 'TEXT', description: 'why, recorded with the transition' },
  ],
  async run(ctx) {
    const id = wholeNumber(arg(ctx, 0), '<signal>', 'bad_argument');
    const raw = str(ctx.args, 'decision');
    const decision = raw?.replace('-', '_') as SignalDecision | undefined;
    if (!decision || !SIGNAL_DECISIONS.includes(decision))
      throw new UsageError(
        'bad_option',
        `--decision must be send-back, escalate or accept${raw ? `, got '${raw}'` : ''}`,
      );
    const t = await planningStore(ctx, 'write').decideSignal(id, decision, ctx.actor, str(ctx.args, 'note') ?? null);
    return output(t, `Signal #${id}: ${t.epic_id} ${t.from} → ${t.to}${t.next_role ? ` · next: ${t.next_role}` : ''}`);
  },
};
