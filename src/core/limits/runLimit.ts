import { basename } from 'node:path';
import { detectLimit } from '../runs/limits.ts';
import { presetFor } from '../runs/presets.ts';
import type { GroupEnd } from '../runs/processGroup.ts';
import { messageOf } from '../../shared/errorMessage.ts';
import { clock, limitGate, recordLimit, settleLimit } from './hostLimits.ts';

/** Whose limit a command meets: its preset's, or for any other command its program's (`node`, `my-agent`). */
export function limitKeyOf(command: readonly string[]): string {
  const preset = presetFor(command);
  if (preset) return preset.id;
  const program = basename(command[0] ?? 'agent').replace(/\.(cmd|exe)$/i, '');
  return (
    program
      .replace(/[^A-Za-z0-9._-]/g, '_')
      .replace(/^\.+/, '')
      .slice(0, 64) || 'agent'
  );
}

/**
 * After an agent ended on its own with a non-zero exit, or was ended as stalled (silent but for its
 * CLI's retries): the limit its output reports, recorded for its preset on this host, as the run's
 * `limited` reason; null when it met none. A limit that cannot be recorded (the state folder
 * unwritable) still makes the run limited, with a warning.
 */
export function limitOfRun(
  env: NodeJS.ProcessEnv,
  command: readonly string[],
  ended: GroupEnd & { readonly stoppedBy: NodeJS.Signals | null; readonly stalled: string | null },
  headline: string | null,
  runId: number,
  warnings: string[],
): string | null {
  if ((ended.exitCode === 0 && !ended.stalled) || ended.timedOut || ended.stoppedBy || ended.spawnError) return null;
  const output = { stdout: ended.stdout ?? '', stderr: ended.stderr ?? '', headline };
  const hit = detectLimit(presetFor(command)?.limits ?? [], output, new Date());
  if (!hit) return null;
  const key = limitKeyOf(command);
  try {
    const limit = recordLimit(env, key, hit, runId);
    return `${hit.message} — ${key} limited until ${clock(limit.until)} on this host`;
  } catch (err) {
    warnings.push(`could not record ${key}'s limit on this host: ${messageOf(err)}`);
    return hit.message;
  }
}

/** A run that met no limit tells the host's record of its preset what it learned (settleLimit). */
export function settleRunLimit(
  env: NodeJS.ProcessEnv,
  command: readonly string[],
  startedAt: number,
  status: string,
  warnings: string[],
): void {
  try {
    settleLimit(env, limitKeyOf(command), new Date(startedAt), status);
  } catch (err) {
    warnings.push(`could not update ${limitKeyOf(command)}'s limit on this host: ${messageOf(err)}`);
  }
}

/**
 * Whether a run started by hand (`springfield run`) may start `command` now, as the scheduler's would:
 * null, or why not ("claude limited until 14:05"). Past the reset it takes the one probe (held by this
 * process at most `holdMs`; the run's end gives it back).
 */
export function limitHolds(env: NodeJS.ProcessEnv, command: readonly string[], holdMs: number): string | null {
  const gate = limitGate(env, limitKeyOf(command), process.pid, holdMs);
  return gate.kind === 'wait' ? gate.reason : null;
}
