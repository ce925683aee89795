import { accessSync, constants, existsSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { basename, delimiter, dirname, join } from 'node:path';
import { AGENT_PRESETS, type AgentPreset } from '../runs/presets.ts';

export interface FoundCli {
  readonly preset: string;
  readonly program: string;
  /** The executable found first on PATH, or null. */
  readonly path: string | null;
  /** Read from the installed package or install folder without running the CLI; null when unknown. */
  readonly version: string | null;
}

/** Which preset CLIs are on `PATH`, without starting any of them (starting some takes seconds). */
export function detectAgentClis(
  env: NodeJS.ProcessEnv = process.env,
  presets: readonly AgentPreset[] = AGENT_PRESETS,
): FoundCli[] {
  return presets.map((p) => {
    const path = which(p.program, env);
    return { preset: p.id, program: p.program, path, version: path ? installedVersion(path, p) : null };
  });
}

/** The first executable named `program` on PATH (with PATHEXT on Windows). */
export function which(program: string, env: NodeJS.ProcessEnv): string | null {
  const exts = process.platform === 'win32' ? (env.PATHEXT ?? '.EXE;.CMD;.BAT').split(';') : [''];
  for (const dir of (env.PATH ?? env.Path ?? '').split(delimiter)) {
    if (!dir) continue;
    for (const ext of exts) {
      const candidate = join(dir, program + ext);
      try {
        if (!statSync(candidate).isFile()) continue;
        accessSync(candidate, constants.X_OK);
        return candidate;
      } catch {
        // not here
      }
    }
  }
  return null;
}

/**
 * The npm package's version beside the resolved executable, or a version folder in its real path
 * (Cursor installs into `…/versions/<version>/`).
 */
function installedVersion(path: string, preset: AgentPreset): string | null {
  let real: string;
  try {
    real = realpathSync(path);
  } catch {
    return null;
  }
  if (preset.npm) {
    for (let dir = dirname(real); dir !== dirname(dir); dir = dirname(dir)) {
      const pkg = join(dir, 'package.json');
      if (!existsSync(pkg)) continue;
      try {
        const json = JSON.parse(readFileSync(pkg, 'utf8')) as { name?: unknown; version?: unknown };
        if (json.name === preset.npm && typeof json.version === 'string') return json.version;
      } catch {
        return null;
      }
    }
  }
  const parent = dirname(real);
  return basename(dirname(parent)) === 'versions' ? basename(parent) : null;
}
