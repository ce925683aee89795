import { mkdirSync, readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { RefusedError, UsageError } from '../errors.ts';
import { parseRunConfig } from '../runs/runConfig.ts';
import { findPreset, PRESET_ROLES, type AgentPreset, type PresetRole } from '../runs/presets.ts';
import { createExclusively, replaceFile, statNoLink, unwritable } from '../safeFiles.ts';
import { messageOf } from '../../shared/errorMessage.ts';

export interface RoleConfigWrite {
  readonly path: string;
  /** True when the file did not exist and was created. */
  readonly created: boolean;
  readonly roles: Readonly<Partial<Record<PresetRole, readonly string[]>>>;
  /** The exact text written: what the trust gate records as allowed (allowWrittenConfig). */
  readonly content: string;
}

/** The preset's commands for `role`, or for every role it fills; refused when it cannot fill `role`. */
export function presetRoles(presetId: string, role?: string): Partial<Record<PresetRole, readonly string[]>> {
  const preset: AgentPreset | undefined = findPreset(presetId);
  if (!preset) throw new UsageError('unknown_preset', `unknown agent preset '${presetId}' (see 'springfield agents')`);
  if (role === undefined) return { ...preset.roles };
  if (!(PRESET_ROLES as readonly string[]).includes(role))
    throw new UsageError('bad_option', `--role must be one of ${PRESET_ROLES.join(', ')}, got '${role}'`);
  const argv = preset.roles[role as PresetRole];
  if (!argv)
    throw new RefusedError(
      'role_not_supported',
      `the ${preset.name} preset cannot act as ${role}${preset.caveat ? `: ${preset.caveat}` : ''}`,
    );
  return { [role]: argv };
}

/**
 * The fallback commands of each of `roles`: the fallback presets' commands for it, in order; a
 * fallback that cannot fill a role is refused when one role was asked for, else left out for that role.
 */
export function presetFallbacks(
  presetId: string,
  fallbackIds: readonly string[],
  roles: Partial<Record<PresetRole, unknown>>,
  role?: string,
): Partial<Record<PresetRole, readonly (readonly string[])[]>> {
  for (const id of fallbackIds) {
    if (id === presetId) throw new UsageError('bad_option', `--fallback ${id} is the preset itself`);
    if (fallbackIds.indexOf(id) !== fallbackIds.lastIndexOf(id))
      throw new UsageError('bad_option', `--fallback ${id} given twice`);
    presetRoles(id, role);
  }
  const out: Partial<Record<PresetRole, readonly (readonly string[])[]>> = {};
  for (const r of Object.keys(roles) as PresetRole[])
    out[r] = fallbackIds.map((id) => findPreset(id)?.roles[r]).filter((c): c is readonly string[] => c !== undefined);
  return out;
}

/**
 * How each of `roles` reports usage under the preset: its id where the preset has a usage reader
 * (cost per run, docs/lifecycle.md), null where it prints none (a reader for another CLI is dropped).
 */
export function presetUsage(
  presetId: string,
  roles: Partial<Record<PresetRole, unknown>>,
): Partial<Record<PresetRole, string | null>> {
  const reader = findPreset(presetId)?.usage ? presetId : null;
  return Object.fromEntries(Object.keys(roles).map((role) => [role, reader]));
}

/**
 * Writes role commands (and their usage readers: null removes one) into `.springfield/config.json`,
 * keeping every other key: created exclusively when absent, replaced through a fresh temporary file
 * when present, never written through a symbolic link, and never left invalid (validated like any config).
 * `verification`, when given, becomes the verification commands (a person confirmed them); `fallbacks`,
 * when given, become those roles' fallback commands (an empty list removes a role's).
 */
export function writeRoleCommands(
  configPath: string,
  roles: Partial<Record<PresetRole, readonly string[]>>,
  usage: Partial<Record<PresetRole, string | null>> = {},
  verification?: readonly (readonly string[])[],
  fallbacks?: Partial<Record<PresetRole, readonly (readonly string[])[]>>,
): RoleConfigWrite {
  statNoLink(dirname(configPath), 'the .springfield folder');
  const existing = readExisting(configPath);
  const base = existing?.value ?? {};
  const merged: Record<string, unknown> = { ...base, roles: { ...(isObject(base.roles) ? base.roles : {}), ...roles } };
  const readers: Record<string, unknown> = { ...(isObject(base.usage) ? base.usage : {}) };
  for (const [role, reader] of Object.entries(usage)) {
    if (reader === null) delete readers[role];
    else readers[role] = reader;
  }
  if (Object.keys(readers).length > 0) merged.usage = readers;
  else delete merged.usage;
  if (verification) merged.verification = verification;
  if (fallbacks) {
    const next: Record<string, unknown> = { ...(isObject(base.fallbacks) ? base.fallbacks : {}) };
    for (const [role, list] of Object.entries(fallbacks)) {
      if (list.length === 0) delete next[role];
      else next[role] = list;
    }
    if (Object.keys(next).length > 0) merged.fallbacks = next;
    else delete merged.fallbacks;
  }
  const content = writeRunConfig(configPath, merged, existing);
  return { path: configPath, created: !existing, roles, content };
}

/**
 * Writes a config `agents use` or `agents route` merged: checked as the scheduler will read it, then put
 * in place of the file it was read from (keeping its mode) or created exclusively; its text.
 */
export function writeRunConfig(
  configPath: string,
  merged: Record<string, unknown>,
  existing: { mode: number } | undefined,
): string {
  parseRunConfig(merged, configPath);
  const content = JSON.stringify(merged, null, 2) + '\n';
  try {
    mkdirSync(dirname(configPath), { recursive: true });
  } catch (err) {
    throw unwritable(dirname(configPath), err);
  }
  if (existing) replaceFile(configPath, content, existing.mode);
  else createExclusively(configPath, content);
  return content;
}

/**
 * A complete config.json for a person to edit: the preset's roles and every other setting at its
 * default (no verification command: nothing runs until the person adds one). An existing file is
 * left as it is.
 */
export function writeConfigTemplate(
  configPath: string,
  roles: Partial<Record<PresetRole, readonly string[]>>,
): { path: string; created: boolean } {
  statNoLink(dirname(configPath), 'the .springfield folder');
  if (statNoLink(configPath, 'the config file')) return { path: configPath, created: false };
  const template = { roles, verification: [], maxParallelAgents: 3, leaseSeconds: 7200 };
  parseRunConfig(template, configPath);
  try {
    mkdirSync(dirname(configPath), { recursive: true });
  } catch (err) {
    throw unwritable(dirname(configPath), err);
  }
  createExclusively(configPath, JSON.stringify(template, null, 2) + '\n');
  // INTEGRATION (issue 10, trust gate): record this content as allowed too (see writeRoleCommands).
  return { path: configPath, created: true };
}

interface Existing {
  readonly value: Record<string, unknown>;
  readonly mode: number;
}

/** The verification commands the config file holds now (none when it is absent or says none). */
export function configuredVerification(configPath: string): readonly (readonly string[])[] {
  const value = readExisting(configPath)?.value.verification;
  return Array.isArray(value)
    ? value.filter((c): c is string[] => Array.isArray(c) && c.every((a) => typeof a === 'string'))
    : [];
}

function readExisting(path: string): Existing | undefined {
  const stat = statNoLink(path, 'the config file');
  if (!stat) return undefined;
  if (!stat.isFile()) throw new RefusedError('config_not_a_file', `${path}: not a regular file; move it away first`);
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new UsageError(
      'invalid_config',
      `${path}: invalid JSON (${messageOf(err)}); fix it or move it away — nothing was written`,
    );
  }
  if (!isObject(value))
    throw new UsageError('invalid_config', `${path}: (top level): expected an object — nothing was written`);
  return { value, mode: stat.mode };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
