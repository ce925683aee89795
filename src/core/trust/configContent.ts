import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { EnvironmentError } from '../errors.ts';
import { messageOf } from '../../shared/errorMessage.ts';

/** A command the config names: where (`roles.ralph`, `verification[0]`) and its argument vector. */
export interface ConfigCommand {
  readonly key: string;
  readonly argv: readonly string[];
}

/** Any other value the config sets (a path, a mode, a number), shown beside the commands. */
export interface ConfigSetting {
  readonly key: string;
  readonly value: string | number | boolean | null;
}

export interface ConfigContent {
  /** sha256 of the file's bytes: what is allowed is exactly this content. */
  readonly hash: string;
  readonly commands: ConfigCommand[];
  readonly settings: ConfigSetting[];
  /** Why the file is not JSON, or null. */
  readonly invalid: string | null;
}

/** Reads the config file once: its hash and what it would run; null when there is none. */
export function readConfigContent(path: string): ConfigContent | null {
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new EnvironmentError('config_unreadable', `${path}: cannot read (${messageOf(err)})`);
  }
  const hash = createHash('sha256').update(bytes).digest('hex');
  let value: unknown;
  try {
    value = JSON.parse(bytes.toString('utf8'));
  } catch (err) {
    return { hash, commands: [], settings: [], invalid: messageOf(err) };
  }
  const commands: ConfigCommand[] = [];
  const settings: ConfigSetting[] = [];
  walk(value, '', commands, settings);
  return { hash, commands, settings, invalid: null };
}

/**
 * Every array of strings is a command (whatever key it is under, so keys added later are shown too);
 * `"merge": "pr"` runs `gh pr create`; every other leaf is a setting.
 */
function walk(value: unknown, key: string, commands: ConfigCommand[], settings: ConfigSetting[]): void {
  if (Array.isArray(value)) {
    if (value.length > 0 && value.every((v) => typeof v === 'string')) commands.push({ key, argv: value as string[] });
    else value.forEach((v, i) => walk(v, `${key}[${i}]`, commands, settings));
    return;
  }
  if (value !== null && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) walk(v, key ? `${key}.${k}` : k, commands, settings);
    return;
  }
  if (key === 'merge' && value === 'pr') commands.push({ key, argv: ['gh', 'pr', 'create', '…'] });
  settings.push({ key: key || '(top level)', value: value as ConfigSetting['value'] });
}
