/**
 * Which preset and model a run used, read from the argv it was started with (runs.command): the
 * preset whose program the argv runs, and the value of its `--model`/`-m` option (docs/stats.md).
 */
import { DEMO_AGENTS } from '../agents/demoAgents.ts';
import { AGENT_PRESETS } from '../runs/presets.ts';

export interface RunAgent {
  readonly preset: string;
  /** `preset/model`, with `default` where the argv names no model. */
  readonly model: string;
}

function baseName(arg: string): string {
  return (arg.split(/[\\/]/).at(-1) ?? arg).replace(/\.(exe|cmd|js|cjs|mjs)$/i, '');
}

/** The run's preset and model; a command that is no known preset is named by its program. */
export function runAgent(command: string): RunAgent {
  let argv: string[] = [];
  try {
    const value: unknown = JSON.parse(command);
    if (Array.isArray(value)) argv = value.filter((a): a is string => typeof a === 'string');
  } catch {
    argv = [];
  }
  const names = argv.map(baseName);
  const preset =
    AGENT_PRESETS.find((p) => names.includes(p.program))?.id ??
    (argv.some((a) => baseName(a) === baseName(DEMO_AGENTS.file)) ? DEMO_AGENTS.id : (names[0] ?? 'unknown'));
  return { preset, model: `${preset}/${modelOf(argv) ?? 'default'}` };
}

function modelOf(argv: readonly string[]): string | null {
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if ((a === '--model' || a === '-m') && i + 1 < argv.length) return argv[i + 1]!;
    if (a.startsWith('--model=')) return a.slice('--model='.length);
  }
  return null;
}
