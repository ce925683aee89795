/**
 * The tools' hand-over of a lost reply (docs/postgres-design.md, "Failures, retries, idempotence", "The agents' tools"): the CLI hands
 * an operation id to its next run through pending.json; the MCP server and the editor are long-lived,
 * so they keep it here, in memory, for the life of the server or window.
 */
import { OutcomeUnknownError, SpringfieldError } from '../errors.ts';
import type { Actor } from '../store/types.ts';

/** Operation ids of writes whose outcome is unknown, by holder, tool and canonical input. One per server or editor window. */
export class LostReplies {
  private readonly ops = new Map<string, string>();

  /** How many are kept (for tests and diagnostics). */
  get size(): number {
    return this.ops.size;
  }

  /**
   * Runs a write that is not idempotent: `send` gets the id of an earlier call with the same tool,
   * input and holder whose outcome is unknown (the store looks it up first), or undefined. A definite
   * answer (a result or a refusal) forgets it; an unknown outcome keeps its id (the earlier one when
   * its lookup could not reach the server, else the new one) and its text asks for the same call again.
   * On SQLite the error never happens, so nothing is ever kept.
   */
  async run<T>(
    tool: string,
    input: unknown,
    actor: Actor,
    send: (resume: string | undefined) => Promise<T>,
  ): Promise<T> {
    const key = canonicalJson([actor.worktree, actor.agent, tool, input]);
    const resume = this.ops.get(key);
    try {
      const result = await send(resume);
      this.ops.delete(key);
      return result;
    } catch (err) {
      if (err instanceof OutcomeUnknownError) {
        this.ops.set(key, err.op);
        throw new OutcomeUnknownError(err.op, againText(err.message, tool, err.op));
      }
      // Unreachable before the lookup could answer: nothing is known yet, the id stays.
      if (!(err instanceof SpringfieldError && err.category === 'environment')) this.ops.delete(key);
      throw err;
    }
  }
}

const AGAIN = 'run the same command again (it picks up where this one stopped)';

/** The store's text, telling an agent to repeat the tool call (never to run the CLI, which would not know the id). */
function againText(message: string, tool: string, op: string): string {
  const again = `call ${tool} again with the same input (it picks up where this call stopped)`;
  const text = message.includes(AGAIN) ? message.replace(AGAIN, again) : `${message}: ${again}`;
  return `${text} (operation ${op}, kept by this server)`;
}

/** JSON with object keys sorted, so equal inputs give equal keys whatever their order. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(
          Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
        )
      : v,
  );
}
