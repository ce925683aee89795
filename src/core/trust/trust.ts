import { createHash } from 'node:crypto';
import { isAbsolute, relative, sep } from 'node:path';
import { RefusedError, UsageError } from '../errors.ts';
import { gitRun } from '../git/exec.ts';
import type { RepoLocation } from '../git/repo.ts';
import { configPathFor } from '../runs/runConfig.ts';
import { allowFile, forgetAllowed, readAllowed, recordAllowed } from './allowList.ts';
import { readConfigContent, type ConfigCommand, type ConfigSetting } from './configContent.ts';

/** Whose config, where: the file beside the database, the repository it belongs to, and the user's environment. */
export interface TrustTarget {
  readonly configPath: string;
  /** The repository's real common git dir (the key the decision is kept under). */
  readonly repository: string;
  /** Where the user's own state lives (XDG_STATE_HOME, HOME). */
  readonly env: NodeJS.ProcessEnv;
}

/** The target for the database at `dbPath` of the repository at `location` (its config sits beside the database). */
export function trustTargetFor(
  location: RepoLocation,
  dbPath: string,
  env: NodeJS.ProcessEnv,
): TrustTarget & { readonly mainRoot: string | null; readonly dbPath: string } {
  return {
    configPath: configPathFor(dbPath),
    repository: location.commonDir,
    env,
    mainRoot: location.mainRoot,
    dbPath,
  };
}

/** no_config: nothing to run from the repository; new: never allowed here; changed: allowed before, not this content. */
export type TrustState = 'no_config' | 'allowed' | 'new' | 'changed';

export interface TrustStatus {
  readonly state: TrustState;
  /** Whether the scheduler may run what the config names. */
  readonly allowed: boolean;
  readonly repository: string;
  readonly config_path: string;
  readonly hash: string | null;
  readonly commands: ConfigCommand[];
  readonly settings: ConfigSetting[];
  readonly invalid: string | null;
  readonly allowed_at: string | null;
  /** The file in the user's state that keeps the decision. */
  readonly record_file: string;
}

/** Whether the repository's config, as it is now, was allowed by this user (docs/trust.md). */
export function trustStatus(target: TrustTarget): TrustStatus {
  const content = readConfigContent(target.configPath);
  const base = {
    repository: target.repository,
    config_path: target.configPath,
    record_file: allowFile(target.env, target.repository),
  };
  if (!content)
    return {
      ...base,
      state: 'no_config',
      allowed: true,
      hash: null,
      commands: [],
      settings: [],
      invalid: null,
      allowed_at: null,
    };
  const known = readAllowed(target.env, target.repository).filter((e) => e.config_path === target.configPath);
  const match = known.find((e) => e.hash === content.hash);
  const state: TrustState = match ? 'allowed' : known.length > 0 ? 'changed' : 'new';
  return {
    ...base,
    state,
    allowed: match !== undefined,
    hash: content.hash,
    commands: content.commands,
    settings: content.settings,
    invalid: content.invalid,
    allowed_at: match?.allowed_at ?? null,
  };
}

/**
 * Refuses (exit 1, one line naming `springfield allow`) unless the repository's config, as it is now,
 * was allowed; and refuses a state database that git tracks (a clone would bring someone else's
 * state). Called first by everything that runs what the config names: orchestrate, run, the editor's scheduler.
 */
export function requireAllowed(
  target: TrustTarget & { readonly mainRoot: string | null; readonly dbPath: string },
): TrustStatus {
  const tracked = trackedPath(target.mainRoot, target.dbPath, target.env);
  if (tracked) {
    throw new RefusedError(
      'state_tracked',
      `${tracked} is tracked by git, so it came with the repository; Springfield will not schedule from it: untrack it with 'git rm -r --cached .springfield' and add '.springfield/' to .gitignore (see 'springfield doctor')`,
    );
  }
  const status = trustStatus(target);
  if (!status.allowed) {
    const why = status.state === 'changed' ? 'changed since you allowed it' : 'has not been allowed on this machine';
    throw new RefusedError(
      'config_not_allowed',
      `${shown(target.mainRoot, target.configPath)} ${why}, and nothing it names runs until you allow it: review and allow it with 'springfield allow'`,
    );
  }
  return status;
}

/**
 * Records that the config, as it is now, may run (the caller showed the person its commands). With
 * `expectedHash`, only if the file still has the content that was shown. Also what a command that
 * writes the config for the person (a preset) calls after writing it.
 */
export function allowConfig(target: TrustTarget, expectedHash?: string): TrustStatus {
  const status = trustStatus(target);
  if (status.hash === null)
    throw new UsageError(
      'no_config',
      `${target.configPath}: there is no repository config to allow (Springfield runs nothing from this repository)`,
    );
  if (expectedHash !== undefined && expectedHash !== status.hash) {
    throw new RefusedError(
      'config_changed',
      `${target.configPath} changed while you were reviewing it; review it again`,
    );
  }
  const at = new Date().toISOString();
  recordAllowed(target.env, target.repository, { config_path: target.configPath, hash: status.hash, allowed_at: at });
  return { ...status, state: 'allowed', allowed: true, allowed_at: at };
}

/**
 * For a command that writes the config on the person's behalf (a preset they chose): the content
 * written is allowed when the file was allowed before it (or did not exist), since then everything in
 * it is what the person chose or already allowed; otherwise the rest of the file is still unreviewed
 * and stays unallowed. Returns whether the config is allowed now.
 */
export function allowWrittenConfig(target: TrustTarget, before: TrustStatus, written: string): boolean {
  if (before.state !== 'no_config' && !before.allowed) return false;
  allowConfig(target, createHash('sha256').update(written).digest('hex'));
  return true;
}

/** Withdraws every allow recorded for the repository; returns whether there was one. */
export function revokeConfig(target: TrustTarget): boolean {
  return forgetAllowed(target.env, target.repository);
}

/** The path of the state database relative to the main worktree when git tracks it there, else null. */
export function trackedPath(mainRoot: string | null, dbPath: string, env: NodeJS.ProcessEnv): string | null {
  const rel = mainRoot ? inside(mainRoot, dbPath) : null;
  if (!mainRoot || rel === null) return null;
  const r = gitRun(mainRoot, ['ls-files', '-z', '--', rel], env);
  return r.status === 0 && r.stdout.split('\0').includes(rel) ? rel : null;
}

/** Files git tracks under `dir` (relative to the main worktree, forward slashes). */
export function trackedUnder(mainRoot: string, dir: string, env: NodeJS.ProcessEnv): string[] {
  const rel = inside(mainRoot, dir);
  if (rel === null) return [];
  const r = gitRun(mainRoot, ['ls-files', '-z', '--', rel], env);
  return r.status === 0 ? r.stdout.split('\0').filter(Boolean) : [];
}

function inside(root: string, path: string): string | null {
  const rel = relative(root, path);
  return rel === '' || rel.startsWith('..') || isAbsolute(rel) ? null : rel.split(sep).join('/');
}

function shown(root: string | null, path: string): string {
  return (root ? inside(root, path) : null) ?? path;
}
