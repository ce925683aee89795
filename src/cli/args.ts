import { type CodeOf, UsageError } from '../core/index.ts';

export interface OptionSpec {
  readonly name: string;
  readonly type: 'string' | 'boolean' | 'int';
  /** Values taken by one occurrence (default 1 for string/int, 0 for boolean). */
  readonly arity?: number;
  readonly multiple?: boolean;
  readonly placeholder?: string;
  readonly description: string;
  readonly alias?: string;
  /** Bounds for int options. */
  readonly min?: number;
  readonly max?: number;
}

export interface PositionalSpec {
  readonly name: string;
  readonly required: boolean;
  readonly description: string;
}

export type OptionValue = string | number | boolean | string[] | string[][];

export interface ParsedArgs {
  readonly positionals: string[];
  readonly options: Map<string, OptionValue>;
  /** Everything after a bare `--`, untouched, for a command that takes one (`run -- <cmd…>`); else empty. */
  readonly rest: string[];
  /** Every option occurrence in command-line order, for options whose meaning pairs up (--location … --note …). */
  readonly ordered: { name: string; values: string[] }[];
}

/**
 * Parses argv against a command's declared options; anything undeclared is a usage error. A bare `--`
 * ends the options: what follows is positionals (a title or a path starting with `-`), or, for a
 * command that takes a trailing command (`run`), that command, untouched.
 */
export function parseArgs(
  command: string,
  argv: readonly string[],
  specs: readonly OptionSpec[],
  positionals: readonly PositionalSpec[],
  trailingCommand = false,
): ParsedArgs {
  const byName = new Map<string, OptionSpec>();
  for (const s of specs) {
    byName.set(s.name, s);
    if (s.alias) byName.set(s.alias, s);
  }
  const out: ParsedArgs = { positionals: [], options: new Map(), rest: [], ordered: [] };
  for (let i = 0; i < argv.length; i++) {
    const token = argv[i] as string;
    if (token === '--') {
      (trailingCommand ? out.rest : out.positionals).push(...argv.slice(i + 1));
      break;
    }
    if (!token.startsWith('-') || token === '-' || /^-\d/.test(token)) {
      out.positionals.push(token);
      continue;
    }
    const eq = token.indexOf('=');
    const name = token.replace(/^--?/, '').slice(0, eq > 0 ? eq - (token.startsWith('--') ? 2 : 1) : undefined);
    const spec = byName.get(name);
    if (!spec)
      throw new UsageError(
        'unknown_option',
        `unknown option ${token.slice(0, eq > 0 ? eq : undefined)} for '${command}' (see 'springfield ${command} --help')`,
      );
    const arity = spec.arity ?? (spec.type === 'boolean' ? 0 : 1);
    let values: string[];
    if (eq > 0) {
      if (arity !== 1)
        throw new UsageError(
          'bad_option',
          `--${spec.name} does not take '=' (it takes ${arity} value${arity === 1 ? '' : 's'})`,
        );
      values = [token.slice(eq + 1)];
    } else {
      values = argv.slice(i + 1, i + 1 + arity) as string[];
      if (values.length < arity || values.some((v) => v.startsWith('--'))) {
        throw new UsageError(
          'missing_value',
          `--${spec.name} needs ${spec.placeholder ?? (arity === 1 ? 'a value' : `${arity} values`)}`,
        );
      }
      i += arity;
    }
    store(out.options, spec, values);
    out.ordered.push({ name: spec.name, values });
  }
  const required = positionals.filter((p) => p.required).length;
  if (out.positionals.length < required) {
    const missing = positionals[out.positionals.length] as PositionalSpec;
    throw new UsageError(
      'missing_argument',
      `'${command}' needs <${missing.name}> (see 'springfield ${command} --help')`,
    );
  }
  if (out.positionals.length > positionals.length) {
    throw new UsageError(
      'unexpected_argument',
      `unexpected argument '${out.positionals[positionals.length]}' for '${command}'`,
    );
  }
  return out;
}

function store(options: Map<string, OptionValue>, spec: OptionSpec, values: string[]): void {
  if (spec.type === 'boolean') {
    options.set(spec.name, true);
    return;
  }
  if (spec.type === 'int') {
    const v = values[0] as string;
    const n = wholeNumber(v, `--${spec.name}`);
    if (options.has(spec.name)) throw new UsageError('bad_option', `--${spec.name} given twice`);
    if ((spec.min !== undefined && n < spec.min) || (spec.max !== undefined && n > spec.max)) {
      throw new UsageError(
        'bad_option',
        `--${spec.name} must be between ${spec.min ?? 0} and ${spec.max ?? Number.MAX_SAFE_INTEGER}, got ${v}`,
      );
    }
    options.set(spec.name, n);
    return;
  }
  if ((spec.arity ?? 1) > 1) {
    const list = (options.get(spec.name) as string[][] | undefined) ?? [];
    list.push(values);
    options.set(spec.name, list);
    return;
  }
  if (spec.multiple) {
    const list = (options.get(spec.name) as string[] | undefined) ?? [];
    list.push(values[0] as string);
    options.set(spec.name, list);
    return;
  }
  if (options.has(spec.name)) throw new UsageError('bad_option', `--${spec.name} given twice`);
  options.set(spec.name, values[0] as string);
}

/**
 * `text` as a whole number, exactly: digits only and at most 2^53 - 1, the largest a JavaScript
 * number holds without rounding (beyond it an id would be changed, not refused). `what` names the
 * input in the one-line refusal, which quotes `text` as given.
 */
export function wholeNumber(text: string, what: string, code: CodeOf<'usage'> = 'bad_option'): number {
  const n = /^\d+$/.test(text) ? Number(text) : NaN;
  if (!Number.isSafeInteger(n)) {
    const why = Number.isNaN(n) ? 'a whole number' : `a whole number up to ${Number.MAX_SAFE_INTEGER}`;
    throw new UsageError(code, `${what} needs ${why}, got '${text}'`);
  }
  return n;
}

/** Typed accessors over parsed options. */
export function str(args: ParsedArgs, name: string): string | undefined {
  const v = args.options.get(name);
  return typeof v === 'string' ? v : undefined;
}
export function int(args: ParsedArgs, name: string): number | undefined {
  const v = args.options.get(name);
  return typeof v === 'number' ? v : undefined;
}
export function flag(args: ParsedArgs, name: string): boolean {
  return args.options.get(name) === true;
}
export function pairs(args: ParsedArgs, name: string): string[][] {
  return (args.options.get(name) as string[][] | undefined) ?? [];
}
export function list(args: ParsedArgs, name: string): string[] {
  return (args.options.get(name) as string[] | undefined) ?? [];
}
