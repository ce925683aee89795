/**
 * Configure agents…'s second question after a preset: which preset the roles fall back to while it is
 * limited or cannot run (docs/agents.md, "Fallbacks"). Pure: no vscode; the choice is written by
 * core's presetFallbacks and writeRoleCommands, as `springfield agents use --fallback` writes it.
 */
import { AGENT_PRESETS, PRESET_ROLES, type PresetRole } from '../../core/index.ts';
import { ROLE_REGISTRY } from '../../shared/roles.ts';
import { presetName } from './usageLimits.ts';

export interface FallbackOption {
  /** The preset to fall back to; null for "No fallback". */
  readonly id: string | null;
  readonly label: string;
  readonly description: string;
}

/** The quick pick's title: "Fall back to… (when Claude is limited)". */
export function fallbackTitle(presetId: string): string {
  return `Fall back to… (when ${presetName(presetId)} is limited)`;
}

/**
 * "No fallback", then every other preset that plays at least one of the chosen roles (`role`
 * undefined: every role `presetId` plays), those whose CLI is on PATH (`found`) first.
 */
export function fallbackOptions(
  presetId: string,
  role: PresetRole | undefined,
  found: ReadonlySet<string>,
): FallbackOption[] {
  const first = AGENT_PRESETS.find((p) => p.id === presetId);
  const roles = role ? [role] : PRESET_ROLES.filter((r) => first?.roles[r]);
  const others = AGENT_PRESETS.filter((p) => p.id !== presetId && roles.some((r) => p.roles[r]))
    .map((p) => {
      const missing = roles.filter((r) => !p.roles[r]).map((r) => ROLE_REGISTRY[r].name);
      const where = found.has(p.id) ? `${p.program} on PATH` : `${p.program} not on PATH`;
      return {
        id: p.id,
        label: `${found.has(p.id) ? '$(pass-filled)' : '$(circle-large-outline)'} ${p.name}`,
        description: missing.length ? `${where} · not for ${missing.join(', ')}` : where,
        found: found.has(p.id),
      };
    })
    .sort((a, b) => Number(b.found) - Number(a.found))
    .map(({ found: _, ...o }) => o);
  return [
    {
      id: null,
      label: '$(circle-slash) No fallback',
      description: `the roles wait for ${presetName(presetId)}'s reset`,
    },
    ...others,
  ];
}
