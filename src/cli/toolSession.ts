import type { ToolSession } from '../core/index.ts';
import type { CliContext } from './cliContext.ts';
import { renderContext } from './render/contextText.ts';

/** A tool session for this process: its worktree, agent id (default `fallbackAgent`) and the shared store, opened per call. */
export function toolSession(ctx: CliContext, fallbackAgent: string): ToolSession {
  const actor = ctx.actor;
  return {
    location: ctx.location,
    actor: { ...actor, agent: actor.agent ?? fallbackAgent },
    env: ctx.env,
    renderContext,
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
