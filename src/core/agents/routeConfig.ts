/**
 * Writes a role's routing (docs/agents.md, "Routing") into `.springfield/config.json`, keeping every
 * other key: created exclusively when absent, replaced through a fresh file when present, never
 * through a link, never left invalid. The role's own command is set to the first preset's when it has none.
 */
import { readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { RefusedError, UsageError } from '../errors.ts';
import { findPreset } from '../runs/presets.ts';
import { type RouteConfig } from '../runs/runConfig.ts';
import { statNoLink } from '../safeFiles.ts';
import { writeRunConfig } from './roleConfig.ts';
import { BUILDING_ROLE } from '../../shared/roles.ts';
import { messageOf } from '../../shared/errorMessage.ts';

/** The route `presets` make for `role`, refused in one line when it cannot be one. */
export function routeFor(role: string, presets: readonly string[], by: string | undefined): RouteConfig {
  if (role !== BUILDING_ROLE)
    throw new UsageError(
      'bad_argument',
      `only ${BUILDING_ROLE} can be routed (routing chooses per step), got '${role}'`,
    );
  if (by !== undefined && by !== 'acceptance' && by !== 'cost')
    throw new UsageError('bad_option', `--by must be acceptance or cost, got '${by}'`);
  for (const id of presets) {
    const preset = findPreset(id);
    if (!preset) throw new UsageError('unknown_preset', `unknown agent preset '${id}' (see 'springfield agents')`);
    if (!preset.roles[BUILDING_ROLE])
      throw new RefusedError('role_not_supported', `the ${preset.name} preset cannot act as ${BUILDING_ROLE}`);
  }
  if (new Set(presets).size !== presets.length) throw new UsageError('bad_argument', 'each preset may be named once');
  if (presets.length < 2)
    throw new UsageError('missing_argument', 'routing needs at least two presets to choose between');
  return { presets: [...presets], ...(by ? { by: by as RouteConfig['by'] } : {}) };
}

/** Writes the route; returns the exact text written (what the trust gate records as allowed). */
export function writeRoute(
  configPath: string,
  route: RouteConfig,
): { path: string; created: boolean; content: string } {
  statNoLink(dirname(configPath), 'the .springfield folder');
  const stat = statNoLink(configPath, 'the config file');
  if (stat && !stat.isFile())
    throw new RefusedError('config_not_a_file', `${configPath}: not a regular file; move it away first`);
  let base: Record<string, unknown> = {};
  if (stat) {
    try {
      const value: unknown = JSON.parse(readFileSync(configPath, 'utf8'));
      if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error('expected an object');
      base = value as Record<string, unknown>;
    } catch (err) {
      throw new UsageError(
        'invalid_config',
        `${configPath}: ${messageOf(err)}; fix it or move it away — nothing was written`,
      );
    }
  }
  const roles = { ...(isObject(base.roles) ? base.roles : {}) };
  if (!roles[BUILDING_ROLE]) roles[BUILDING_ROLE] = findPreset(route.presets[0] ?? '')?.roles[BUILDING_ROLE];
  const merged = { ...base, roles, routes: { ...(isObject(base.routes) ? base.routes : {}), [BUILDING_ROLE]: route } };
  const content = writeRunConfig(configPath, merged, stat);
  return { path: configPath, created: !stat, content };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
