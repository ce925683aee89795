import type { StoreHost } from '../storeHost.ts';
import type * as vscode from 'vscode';
import type { NodeRef } from '../views/nodes.ts';
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
  /** Whether the scheduler runs in this window, and the roles with an agent: what Create epic says happens next. */
  readonly scheduler?: () => { readonly running: boolean; readonly roles: readonly string[] };
  /** The terminal of an epic's agent runs in this window, if one is open. */
  readonly agentTerminal?: (epicId: string) => vscode.Terminal | undefined;
}

/** The node behind a clicked row, from whichever tree it came. */
export function refOf(ctx: CommandContext, row: Row | undefined): NodeRef | undefined {
  if (!row) return undefined;
  const ref = (ctx.epics.node(row) ?? ctx.signals.node(row))?.ref;
  // An epic named by its row id (a notification's button, a Needs you action) before the tree showed it.
  const epicId = /^epic:(sf-[0-9a-f]+)$/.exec(row.id)?.[1];
  return ref ?? (epicId ? { epicId } : undefined);
}
