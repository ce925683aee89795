import { existsSync } from 'node:fs';
import { EnvironmentError, UsageError } from '../errors.ts';
import { PRESET_ROLES, type PresetRole } from '../runs/presets.ts';

/**
 * The demo agents: the stand-in agent (scripts/standInAgent.ts, bundled as dist/standInAgent.cjs into
 * the VSIX and the CLI's npm package) plays every role with no model. It reads its context file and
 * follows the role's prompt mechanically: Lisa proposes the prompt's example plan titled for the epic,
 * Ralph writes a file for his step (`standin/<step>-<epic>.txt`), ticks its items and commits, Bart
 * records a pass at the first line the diff adds. For trying Springfield without an agent
 * subscription (docs/agents.md, "Demo agents").
 */
export const DEMO_AGENTS = {
  id: 'demo',
  name: 'Demo agents',
  summary: 'no model; they follow the plan mechanically',
  /** The bundle's file name, beside the CLI's own bundles in dist/. */
  file: 'standInAgent.cjs',
} as const;

/**
 * The demo agents' command for `role`, or for every role: `runtime` runs `script` on the run's context
 * file. `runtime` is the Node (or the editor's Electron, which `springfield run` then runs as Node)
 * that runs the CLI writing the config; `script` must exist.
 */
export function demoRoles(
  runtime: string,
  script: string,
  role?: string,
): Partial<Record<PresetRole, readonly string[]>> {
  if (role !== undefined && !(PRESET_ROLES as readonly string[]).includes(role)) {
    throw new UsageError('bad_option', `--role must be one of ${PRESET_ROLES.join(', ')}, got '${role}'`);
  }
  if (!existsSync(script)) {
    throw new EnvironmentError(
      'demo_agents_missing',
      `the demo agents are not installed: ${script} is missing (npm run build makes it)`,
    );
  }
  const argv = [runtime, script, '$SPRINGFIELD_CONTEXT_FILE'];
  const roles = role === undefined ? PRESET_ROLES : [role as PresetRole];
  return Object.fromEntries(roles.map((r) => [r, argv]));
}
