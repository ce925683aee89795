import { closeSync, constants, fstatSync, lstatSync, openSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { UsageError } from '../errors.ts';
import type { ContextView } from '../store/epicTypes.ts';
import { messageOf } from '../../shared/errorMessage.ts';
import { type PromptName, roleSpec } from '../../shared/roles.ts';

/** The prompts shipped with Springfield (src/core/agents/prompts/*.md, named by the role registry), overridable per repository. */
export { PROMPT_NAMES, type PromptName } from '../../shared/roles.ts';

/** Filled in by the build (esbuild.mjs) with the markdown files as JSON; absent when running from source. */
declare const __SF_ROLE_PROMPTS__: string | undefined;

const MAX_PROMPT_BYTES = 256 * 1024;

export interface RolePrompt {
  readonly name: PromptName;
  readonly text: string;
  /** The override file it came from, or null for the built-in prompt. */
  readonly override: string | null;
}

/** The prompt a role's run gets: Ralph without a step is the fix-up run after a review or a failed verification. */
export function promptNameFor(role: string, hasStep: boolean): PromptName | null {
  const spec = roleSpec(role);
  return ((hasStep ? null : spec?.promptWithoutStep) ?? spec?.prompt ?? null) as PromptName | null;
}

/** The built-in prompt text. */
export function builtInPrompt(name: PromptName): string {
  if (typeof __SF_ROLE_PROMPTS__ !== 'undefined')
    return (JSON.parse(__SF_ROLE_PROMPTS__) as Record<string, string>)[name] ?? '';
  return readFileSync(new URL(`./prompts/${name}.md`, import.meta.url), 'utf8');
}

/**
 * `<promptsDir>/<name>.md` when present (a regular file, never followed through a link), else the
 * built-in prompt. The folder is `.springfield/prompts` beside the database.
 */
export function loadRolePrompt(name: PromptName, promptsDir: string | null): RolePrompt {
  if (promptsDir) {
    const path = join(promptsDir, `${name}.md`);
    const text = readOverride(path);
    if (text !== null) return { name, text, override: path };
  }
  return { name, text: builtInPrompt(name), override: null };
}

function readOverride(path: string): string | null {
  let stat;
  try {
    stat = lstatSync(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new UsageError('prompt_unreadable', `${path}: cannot read (${messageOf(err)})`);
  }
  if (stat.isSymbolicLink())
    throw new UsageError('prompt_symlink', `${path}: is a symbolic link; a prompt override must be a regular file`);
  if (!stat.isFile()) throw new UsageError('prompt_not_a_file', `${path}: not a regular file`);
  const fd = openSync(path, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0));
  try {
    if (fstatSync(fd).size > MAX_PROMPT_BYTES)
      throw new UsageError('prompt_too_large', `${path}: larger than ${MAX_PROMPT_BYTES / 1024} KB`);
    return readFileSync(fd, 'utf8');
  } finally {
    closeSync(fd);
  }
}

export interface PromptFacts {
  readonly view: ContextView;
  /** The plan file the run works on (for Lisa: the one she writes), repository-relative. */
  readonly planPath: string | null;
  /** The branch the epic's branch was made from, for Bart's diff. */
  readonly baseBranch: string;
  /** The configured verification commands, each an argv. */
  readonly verification: readonly (readonly string[])[];
}

/** The values `{{name}}` placeholders take (see docs/agents.md for the list). */
export function promptValues(f: PromptFacts): Record<string, string> {
  const epic = f.view.epic?.id ?? '<epic>';
  const plan = f.planPath ?? f.view.plan?.plan_path ?? `plans/${epic}.md`;
  const step = f.view.step;
  return {
    epic,
    title: f.view.epic?.title ?? '',
    plan,
    step: step?.anchor ?? '<step>',
    step_title: step?.title ?? '',
    base: f.baseBranch,
    tick_items: tickItems(plan, step),
    run_tests: runTests(f.verification),
  };
}

/** Replaces `{{name}}` with its value; unknown names are left as they are. */
export function fillPrompt(template: string, values: Readonly<Record<string, string>>): string {
  return template.replace(/\{\{\s*([a-z_]+)\s*\}\}/g, (whole, key: string) => values[key] ?? whole);
}

function tickItems(plan: string, step: ContextView['step']): string {
  if (!step) return 'There is no step in this run.';
  const lines: string[] = [];
  for (const s of [step, ...step.substeps]) {
    for (const i of s.items)
      if (i.status !== 'completed')
        lines.push(`springfield update ${shellWord(plan)} ${s.anchor} --${i.kind} ${i.ordinal} completed`);
  }
  return lines.length > 0 ? ['```sh', ...lines, '```'].join('\n') : 'Every item is already ticked.';
}

function runTests(commands: readonly (readonly string[])[]): string {
  if (commands.length === 0) return "Run the project's own tests (see its README or package.json).";
  return [
    'These are the verification commands Springfield runs after you:',
    '',
    '```sh',
    ...commands.map((c) => c.map(shellWord).join(' ')),
    '```',
  ].join('\n');
}

/** A word as a shell would read it back: bare when plain, else single-quoted. */
export function shellWord(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/** The context file: the role's instructions first, then the facts they refer to. */
export function withPrompt(prompt: string, context: string): string {
  return `${prompt.trimEnd()}\n\n---\n\n${context}`;
}
