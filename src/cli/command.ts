import type { OptionSpec, PositionalSpec } from './args.ts';
import type { StepStore, Store } from '../core/index.ts';
import type { CliContext } from './cliContext.ts';
import type { CommandOutput } from './output.ts';

/** A CLI command: declared arguments (for parsing and --help) and a thin run over core, with a store of kind `S`. */
export interface Command<S extends StepStore = Store> {
  readonly name: string;
  readonly summary: string;
  readonly positionals: readonly PositionalSpec[];
  readonly options: readonly OptionSpec[];
  /** Extra help text shown under the usage line. */
  readonly details?: string;
  /** Takes a command after a bare `--` (ctx.args.rest, untouched); elsewhere `--` only ends the options. */
  readonly trailingCommand?: boolean;
  run(ctx: CliContext<S>): Promise<CommandOutput>;
}

export const GLOBAL_OPTIONS: readonly OptionSpec[] = [
  { name: 'json', type: 'boolean', description: 'print exactly one JSON document on stdout' },
  {
    name: 'db',
    type: 'string',
    placeholder: 'PATH',
    description: 'database file (default: .springfield/state.db of the main worktree; env SPRINGFIELD_DB)',
  },
  {
    name: 'worktree',
    type: 'string',
    placeholder: 'PATH',
    description: 'act as this worktree (default: the current worktree root)',
  },
  {
    name: 'agent',
    type: 'string',
    placeholder: 'ID',
    description: 'agent id recorded with claims and events (env SPRINGFIELD_AGENT)',
  },
  { name: 'help', type: 'boolean', alias: 'h', description: 'show help for this command' },
];

export const PLAN_ARG: PositionalSpec = {
  name: 'plan',
  required: true,
  description: 'path to the plan file (markdown)',
};
export const EPIC_ARG: PositionalSpec = { name: 'epic', required: true, description: 'epic id, e.g. sf-a3f8' };
export const STEP_ARG: PositionalSpec = {
  name: 'step',
  required: true,
  description: 'step anchor, e.g. step-2 or step-2-1',
};
export const TOKEN_OPTION: OptionSpec = {
  name: 'token',
  type: 'int',
  placeholder: 'N',
  description: 'claim token that must still be current (env SPRINGFIELD_CLAIM_TOKEN)',
};
export const LEASE_OPTION: OptionSpec = {
  name: 'lease',
  type: 'int',
  alias: 'lease-duration',
  placeholder: 'SECONDS',
  description: 'lease length in seconds, 1 to 31622400 (default 7200)',
  min: 1,
  max: 31_622_400,
};

/** Positional argument i, which the parser has already checked is present when required. */
export function arg(ctx: CliContext<StepStore>, i: number): string {
  return ctx.args.positionals[i] as string;
}
