import { readFileSync } from 'node:fs';
import type { OptionSpec } from './args.ts';
import type { StepStore } from '../core/index.ts';
import { GLOBAL_OPTIONS, type Command } from './command.ts';

/** Help reads only what a command declares, whatever store it runs on. */
type Declared = Command<StepStore>;

declare const __SF_VERSION__: string | undefined;

/** package.json's version: put in by the build (esbuild.mjs `define`), read from the file when run from source. */
export const VERSION: string = typeof __SF_VERSION__ === 'string' ? __SF_VERSION__ : sourceVersion();

function sourceVersion(): string {
  return (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string })
    .version;
}

/** `springfield --help`. */
export function mainHelp(commands: readonly Declared[]): string {
  const width = Math.max(...commands.map((c) => c.name.length)) + 2;
  return [
    'springfield — coordinate several coding agents on one repository',
    '',
    'Usage: springfield <command> [args] [--json] [--db PATH] [--worktree PATH] [--agent ID]',
    '',
    'Commands:',
    ...commands.map((c) => `  ${c.name.padEnd(width)}${c.summary}`),
    '',
    "Run 'springfield <command> --help' for a command's arguments.",
    'Exit codes: 0 done · 1 refused by the rules · 2 bad usage or input · 3 environment (not a repo, locked, schema too new)',
  ].join('\n');
}

/** `springfield epic --help`: the subcommands of a group. */
export function groupHelp(group: string, commands: readonly Declared[]): string {
  const width = Math.max(...commands.map((c) => c.name.length)) + 2;
  return [
    `Usage: springfield ${group} <subcommand> [args] [options]`,
    '',
    'Subcommands:',
    ...commands.map((c) => `  ${c.name.padEnd(width)}${c.summary}`),
    '',
    `Run 'springfield ${group} <subcommand> --help' for its arguments.`,
  ].join('\n');
}

/** `springfield <command> --help`. */
export function commandHelp(c: Declared): string {
  const usage = [
    'springfield',
    c.name,
    ...c.positionals.map((p) => (p.required ? `<${p.name}>` : `[${p.name}]`)),
    '[options]',
  ].join(' ');
  const opt = (o: OptionSpec) =>
    `--${o.name}${o.placeholder ? ` ${o.placeholder}` : ''}${o.alias && o.alias.length > 1 ? ` (or --${o.alias})` : ''}`;
  const all = [...c.options, ...GLOBAL_OPTIONS];
  const width = Math.max(...all.map((o) => opt(o).length), ...c.positionals.map((p) => p.name.length + 2)) + 2;
  return [
    `Usage: ${usage}`,
    '',
    c.summary.charAt(0).toUpperCase() + c.summary.slice(1) + '.',
    ...(c.details ? ['', c.details] : []),
    ...(c.positionals.length
      ? ['', 'Arguments:', ...c.positionals.map((p) => `  ${`<${p.name}>`.padEnd(width)}${p.description}`)]
      : []),
    '',
    'Options:',
    ...all.map((o) => `  ${opt(o).padEnd(width)}${o.description}`),
  ].join('\n');
}
