/**
 * A usage limit belongs to an agent preset on this host (its CLI and its credentials), so it is kept
 * where every Springfield process of this user sees it: `limits/<preset>.json` in the user's state
 * folder (docs/agents.md, "Usage limits"). Each file is replaced atomically through a fresh exclusive
 * file; the probe after a reset is a file created exclusively, so one process wins it.
 */
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fallbackWaitMs, type LimitHit } from '../runs/limits.ts';
import { pidAlive } from '../runs/processGroup.ts';
import { ensureOwnDirectory, replaceFile, statNoLink } from '../safeFiles.ts';
import { ensureStateDir, userStateDir } from '../trust/stateDir.ts';

/** A preset's limit on this host. */
export interface PresetLimit {
  readonly preset: string;
  /** No run of the preset starts before this (ISO 8601); after it, one probe run. */
  readonly until: string;
  /** When the first limit of this streak was met. */
  readonly since: string;
  /** Limits met in a row (the fallback wait doubles with each). */
  readonly consecutive: number;
  /** The CLI's words. */
  readonly message: string;
  /** Whether `until` was read from the message (else the fallback wait). */
  readonly resetGiven: boolean;
  readonly runId: number | null;
}

/** Whether a preset may start a run now. */
export type LimitGate =
  | { readonly kind: 'free' }
  /** This process holds the one probe, taken at `at` (ISO 8601): the run it starts gives it back (giveBackProbe if none starts). */
  | { readonly kind: 'probe'; readonly at: string }
  | { readonly kind: 'wait'; readonly limit: PresetLimit; readonly reason: string };

const PRESET_ID = /^[A-Za-z0-9._-]{1,64}$/;

function dirOf(env: NodeJS.ProcessEnv): string {
  return join(userStateDir(env), 'limits');
}

function fileOf(env: NodeJS.ProcessEnv, preset: string, ext: string): string {
  if (!PRESET_ID.test(preset) || preset.startsWith('.')) throw new Error(`not a preset name: '${preset}'`);
  return join(dirOf(env), `${preset}${ext}`);
}

/** Every limit recorded on this host (waiting or awaiting its probe), by preset. */
export function presetLimits(env: NodeJS.ProcessEnv): PresetLimit[] {
  let names: string[];
  try {
    names = readdirSync(dirOf(env));
  } catch {
    return [];
  }
  return names
    .filter((n) => n.endsWith('.json') && !n.startsWith('.'))
    .map((n) => limitOf(env, n.slice(0, -5)))
    .filter((l): l is PresetLimit => l !== null);
}

/** The preset's limit on this host, or null when none is recorded. */
export function limitOf(env: NodeJS.ProcessEnv, preset: string): PresetLimit | null {
  try {
    const path = fileOf(env, preset, '.json');
    if (!statNoLink(path, 'a limit file')?.isFile()) return null;
    const value = JSON.parse(readFileSync(path, 'utf8')) as PresetLimit;
    return typeof value.until === 'string' && Number.isFinite(Date.parse(value.until)) ? value : null;
  } catch {
    return null;
  }
}

/** Until when the preset is limited (ISO 8601), or null when it may start now. */
export function limitedUntil(env: NodeJS.ProcessEnv, preset: string, now: Date = new Date()): string | null {
  const l = limitOf(env, preset);
  return l && Date.parse(l.until) > now.getTime() ? l.until : null;
}

/**
 * Records that a run of `preset` met its limit: until the reset the message names, else the
 * fallback wait (60 s doubling per limit in a row, at most 30 min). A probe in flight is done.
 */
export function recordLimit(
  env: NodeJS.ProcessEnv,
  preset: string,
  hit: LimitHit,
  runId: number | null,
  now: Date = new Date(),
): PresetLimit {
  ensureOwnDirectory(ensureStateDir(env));
  ensureOwnDirectory(dirOf(env), { private: true });
  const before = limitOf(env, preset);
  // A limit met by a run that started before the last one was recorded is the same limit, not another in a row.
  const again = before !== null && Date.parse(before.until) <= now.getTime();
  const consecutive = before ? (again ? before.consecutive + 1 : before.consecutive) : 1;
  const given = hit.resetAt !== null && Date.parse(hit.resetAt) > now.getTime();
  const until = given ? (hit.resetAt as string) : new Date(now.getTime() + fallbackWaitMs(consecutive)).toISOString();
  const limit: PresetLimit = {
    preset,
    until: before && !again && Date.parse(before.until) > Date.parse(until) ? before.until : until,
    since: before?.since ?? now.toISOString(),
    consecutive,
    message: hit.message,
    resetGiven: given,
    runId,
  };
  replaceFile(fileOf(env, preset, '.json'), JSON.stringify(limit, null, 2) + '\n');
  releaseProbe(env, preset);
  return limit;
}

/** The preset's limit is over (a run after its reset got through): removed with its probe. */
export function clearLimit(env: NodeJS.ProcessEnv, preset: string): void {
  rmSync(fileOf(env, preset, '.json'), { force: true });
  releaseProbe(env, preset);
}

export function releaseProbe(env: NodeJS.ProcessEnv, preset: string): void {
  rmSync(fileOf(env, preset, '.probe'), { force: true });
}

/**
 * Whether a run of `preset` may start now: free without a limit; `wait` before its reset, or while
 * another process's probe is out; past the reset, the first caller gets the one `probe` (the file
 * created exclusively, naming `pid`, held at most `holdMs`; a probe whose process is gone or whose hold
 * ran out is taken over).
 */
export function limitGate(
  env: NodeJS.ProcessEnv,
  preset: string,
  pid: number,
  holdMs: number,
  now: Date = new Date(),
): LimitGate {
  const limit = limitOf(env, preset);
  if (!limit) return { kind: 'free' };
  if (Date.parse(limit.until) > now.getTime())
    return { kind: 'wait', limit, reason: `${preset} limited until ${clock(limit.until, now)}` };
  const probe = fileOf(env, preset, '.probe');
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const until = new Date(now.getTime() + holdMs).toISOString();
      writeFileSync(probe, JSON.stringify({ pid, at: now.toISOString(), until }) + '\n', { flag: 'wx', mode: 0o600 });
      return { kind: 'probe', at: now.toISOString() };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') return { kind: 'probe', at: now.toISOString() };
      const holder = probeHolder(probe);
      if (holder !== null && pidAlive(holder.pid) && Date.parse(holder.until) > now.getTime())
        return { kind: 'wait', limit, reason: `${preset} limited: one run is trying it again after its reset` };
      rmSync(probe, { force: true });
    }
  }
  return { kind: 'wait', limit, reason: `${preset} limited: one run is trying it again after its reset` };
}

/**
 * What a run that ended without meeting the limit says of it: one that started after the reset got
 * through (or failed for another reason: the model answered), so the limit is over; a run that ended
 * before it could tell (stopped, timed out, could not start) only gives the probe back.
 */
export function settleLimit(env: NodeJS.ProcessEnv, preset: string, startedAt: Date, status: string): void {
  const limit = limitOf(env, preset);
  if (!limit || Date.parse(limit.until) > startedAt.getTime()) return;
  if (status === 'succeeded' || status === 'failed' || status === 'no_progress') clearLimit(env, preset);
  else releaseProbe(env, preset);
}

/**
 * Gives back the probe `pid` took at `at` when no run of it settled the limit (the scheduler started
 * none, or its run ended before its agent did): the next start may probe. Another's probe is left alone.
 */
export function giveBackProbe(env: NodeJS.ProcessEnv, preset: string, pid: number, at: string): void {
  const holder = probeHolder(fileOf(env, preset, '.probe'));
  if (holder?.pid === pid && holder.at === at) releaseProbe(env, preset);
}

function probeHolder(path: string): { pid: number; at: string | null; until: string } | null {
  try {
    const p = JSON.parse(readFileSync(path, 'utf8')) as { pid?: unknown; at?: unknown; until?: unknown };
    return typeof p.pid === 'number' && typeof p.until === 'string'
      ? { pid: p.pid, at: typeof p.at === 'string' ? p.at : null, until: p.until }
      : null;
  } catch {
    return null;
  }
}

/** "14:05" (this host's local time), with the date when it is not today. */
export function clock(iso: string, now: Date = new Date()): string {
  const d = new Date(iso);
  const hm = `${String(d.getHours()).padStart(2, '0')}:${String(d.getMinutes()).padStart(2, '0')}`;
  return d.toDateString() === now.toDateString()
    ? hm
    : `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')} ${hm}`;
}
