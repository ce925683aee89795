import type { LostReplies, ToolSession } from '../core/agents/tools.ts';
import type { CliContext } from './cliContext.ts';
import { renderContext } from './render/contextText.ts';

/**
 * A tool session for this process: its worktree, agent id (default `fallbackAgent`) and the shared
 * store, opened per call; `lostReplies` is the server's, kept across calls.
 */
export function toolSession(ctx: CliContext, fallbackAgent: string, lostReplies: LostReplies): ToolSession {
  const actor = ctx.actor;
  return {
    location: ctx.location,
    actor: { ...actor, agent: actor.agent ?? fallbackAgent },
    env: ctx.env,
    renderContext,
    lostReplies,
    async withStore(fn) {
      const store = ctx.ownStore();
      try {
        return await fn(store);
      } finally {
        await store.close();
      }
    },
  };
}
