import type { StoreHost } from '../storeHost.ts';
import type { NodeTreeProvider, Row } from '../views/treeProvider.ts';

/** What command handlers share: the store host and the tree providers (to read a clicked row). */
export interface CommandContext {
  readonly host: StoreHost;
  readonly epics: NodeTreeProvider;
  readonly signals: NodeTreeProvider;
  readonly openApproval: (epicId: string) => void;
  readonly openDashboard: () => void;
  /** Shows and expands a step in the Epics tree. */
  readonly revealStep?: (planPath: string, anchor: string) => void;
}

/** The node behind a clicked row, from whichever tree it came. */
export function refOf(ctx: CommandContext, row: Row | undefined) {
  if (!row) return undefined;
  return (ctx.epics.node(row) ?? ctx.signals.node(row))?.ref;
}
