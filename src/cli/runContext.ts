import { basename, dirname, join } from 'node:path';
import {
  type AgentRunStart,
  contextDirFor,
  createExclusively,
  ensureContextDir,
  ensureGitignored,
  EnvironmentError,
  isDatabaseUrl,
  SpringfieldError,
  type Store,
  writeExclusive,
} from '../core/index.ts';
import type { CliContext } from './cliContext.ts';
import { renderContext } from './render/contextText.ts';
import { contextForRole } from './rolePromptText.ts';
import { messageOf } from '../shared/errorMessage.ts';

/**
 * Writes the run's context as markdown: kept under the database folder (`context/<run-id>-<random>.md`,
 * the record of what the agent was told) and, when the agent works in another worktree, a copy of
 * the same name in that worktree's `.springfield-context/`, where the agent may read it
 * (contextDirFor; docs/agents.md). Both are created new, never through a link planted there. Returns
 * the agent's copy; a failure ends the run as failed.
 */
export async function writeContextFile(ctx: CliContext, store: Store, p: AgentRunStart): Promise<string> {
  const kept = join(dirname(ctx.stateFile), 'context');
  const readable = contextDirFor(p.holder.worktree, ctx.location.mainRoot, ctx.stateFile);
  const file = join(readable, `${p.run.id}-….md`);
  try {
    // On PostgreSQL no database file makes the repository's .springfield/ folder: keep it out of git as one would.
    if (isDatabaseUrl(ctx.dbPath)) ctx.gitignoreAdded = ensureGitignored(ctx.location) || ctx.gitignoreAdded;
    const view = await store.context({
      epicId: p.run.epic_id ?? undefined,
      stepAnchor: p.stepAnchor ?? undefined,
      actor: p.holder,
      docsRoot: ctx.location.mainRoot ?? ctx.location.worktreeRoot,
      role: p.run.role,
      beforeRun: p.run.id,
    });
    // A merge conflict the scheduler gives Ralph comes first: it is this run's task (docs/files.md).
    const conflict = ctx.env.SPRINGFIELD_CONFLICT ? `${ctx.env.SPRINGFIELD_CONFLICT.trimEnd()}\n\n` : '';
    const text = conflict + contextForRole(ctx, p.run.role, view, p.planPath, renderContext(view)) + '\n';
    ensureContextDir(kept, ctx.location.commonDir);
    const record = writeExclusive(kept, String(p.run.id), '.md', text);
    if (readable === kept) return record;
    ensureContextDir(readable, ctx.location.commonDir);
    const copy = join(readable, basename(record));
    createExclusively(copy, text);
    return copy;
  } catch (err) {
    await store.finishRun(
      p.run.id,
      { exitCode: 1, signal: null, fault: `cannot write the run's context: ${messageOf(err)}` },
      p.holder,
    );
    if (err instanceof SpringfieldError) throw err;
    throw new EnvironmentError(
      'context_unwritable',
      `${file}: cannot write the run's context (${messageOf(err)}); run ${p.run.id} recorded as failed`,
    );
  }
}
