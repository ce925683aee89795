import type { Store } from '../core/index.ts';
import type { CliContext } from './cliContext.ts';

/** The store for the commands beyond steps: the same one `ctx.store` opens (kept while callers move over). */
export function planningStore(ctx: CliContext, mode: 'create' | 'write' | 'read'): Store {
  return ctx.store(mode);
}
