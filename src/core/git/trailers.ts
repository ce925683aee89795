import { UsageError } from '../errors.ts';
import { gitOut } from './exec.ts';

export const STEP_TRAILER = 'Springfield-Step';
export const PLAN_TRAILER = 'Springfield-Plan';
export const EPIC_TRAILER = 'Springfield-Epic';

/** One (plan, step) named by a commit's trailers. */
export interface StepTrailer {
  readonly commit_hash: string;
  readonly plan_path: string;
  readonly step_anchor: string;
  readonly epic_id: string | null;
}

export interface CommitTrailers {
  readonly step: string;
  readonly plan: string;
  readonly epic: string | null;
}

const FIELD = '\x1f';
const RECORD = '\x1e';
const VALUE = '\x1d';

/** `git commit` arguments adding the Springfield trailers (git interpret-trailers format). */
export function trailerArgs(t: CommitTrailers): string[] {
  const pairs: [string, string | null][] = [
    [STEP_TRAILER, t.step],
    [PLAN_TRAILER, t.plan],
    [EPIC_TRAILER, t.epic],
  ];
  const args: string[] = [];
  for (const [key, value] of pairs) {
    if (value === null) continue;
    if (value.trim() === '' || /[\r\n]/.test(value) || value !== value.trim()) {
      throw new UsageError(
        'bad_trailer',
        `cannot write a ${key} trailer for ${JSON.stringify(value)}: it must be one line without surrounding spaces`,
      );
    }
    args.push('--trailer', `${key}: ${value}`);
  }
  return args;
}

/** True when a commit message already carries a Springfield trailer line (commit adds them itself). */
export function hasSpringfieldTrailer(message: string): boolean {
  return new RegExp(`^\\s*(${STEP_TRAILER}|${PLAN_TRAILER}|${EPIC_TRAILER})\\s*:`, 'im').test(message);
}

/**
 * Every (plan, step) named by Springfield trailers on any branch or worktree HEAD, newest commit
 * first (date order, children before parents).
 */
export function readStepTrailers(cwd: string, env: NodeJS.ProcessEnv): StepTrailer[] {
  const value = (key: string) => `%(trailers:key=${key},valueonly,separator=%x1d)`;
  const format = ['%H', value(STEP_TRAILER), value(PLAN_TRAILER), value(EPIC_TRAILER)].join('%x1f') + '%x1e';
  const log = gitOut(
    cwd,
    ['log', '--all', '--date-order', '--regexp-ignore-case', `--grep=^${STEP_TRAILER}:`, `--format=${format}`],
    env,
  );
  return parseTrailerLog(log);
}

/**
 * Parses the `readStepTrailers` log format. Step i pairs with plan i, or with the last plan when
 * there are fewer plans than steps; commits lacking either trailer are ignored.
 */
export function parseTrailerLog(log: string): StepTrailer[] {
  const out: StepTrailer[] = [];
  for (const raw of log.split(RECORD)) {
    const record = raw.replace(/^\n+/, '');
    if (record === '') continue;
    const [hash = '', steps = '', plans = '', epics = ''] = record.split(FIELD);
    const stepList = values(steps);
    const planList = values(plans);
    const epicList = values(epics);
    if (!/^[0-9a-f]{40,64}$/.test(hash) || stepList.length === 0 || planList.length === 0) continue;
    stepList.forEach((step, i) => {
      const plan = planList[Math.min(i, planList.length - 1)] as string;
      const epic = epicList.length > 0 ? (epicList[Math.min(i, epicList.length - 1)] as string) : null;
      out.push({ commit_hash: hash, plan_path: plan, step_anchor: step, epic_id: epic });
    });
  }
  return out;
}

function values(field: string): string[] {
  return field
    .split(VALUE)
    .map((v) => v.trim())
    .filter((v) => v !== '');
}
