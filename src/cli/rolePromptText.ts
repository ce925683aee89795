import { dirname, join } from 'node:path';
import {
  configPathFor,
  type ContextView,
  fillPrompt,
  gitOut,
  loadRoleCommands,
  loadRolePrompt,
  promptNameFor,
  promptValues,
  withPrompt,
} from '../core/index.ts';
import type { CliContext } from './cliContext.ts';

/**
 * The context as an agent of `role` reads it: the role's prompt (built in, or
 * `.springfield/prompts/<name>.md`) with the real epic, plan and step filled in, then the context.
 * Roles without a prompt (Lovejoy) get the context alone.
 */
export function contextForRole(
  ctx: CliContext,
  role: string | null,
  view: ContextView,
  planPath: string | null,
  context: string,
): string {
  const name = role ? promptNameFor(role, view.step !== null) : null;
  if (!name) return context;
  const prompt = loadRolePrompt(name, join(dirname(ctx.stateFile), 'prompts'));
  const values = promptValues({ view, planPath, baseBranch: baseBranch(ctx), verification: verificationOf(ctx) });
  return withPrompt(fillPrompt(prompt.text, values), context);
}

/** The main worktree's branch: epic branches are made from it. */
function baseBranch(ctx: CliContext): string {
  try {
    const branch = gitOut(
      ctx.location.mainRoot ?? ctx.location.commonDir,
      ['rev-parse', '--abbrev-ref', 'HEAD'],
      ctx.env,
    ).trim();
    return branch && branch !== 'HEAD' ? branch : 'main';
  } catch {
    return 'main';
  }
}

function verificationOf(ctx: CliContext): readonly (readonly string[])[] {
  try {
    return loadRoleCommands(configPathFor(ctx.stateFile)).verification;
  } catch {
    return [];
  }
}
