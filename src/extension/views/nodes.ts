/** A tree row as data: what the TreeDataProvider turns into a vscode.TreeItem. No vscode here. */
export type NodeKind = 'needs' | 'epic' | 'plan' | 'step' | 'item' | 'note' | 'signal' | 'location' | 'run';

export interface NodeRef {
  readonly epicId?: string;
  readonly planPath?: string;
  readonly anchor?: string;
  readonly itemId?: number;
  readonly signalId?: number;
  readonly file?: string;
  readonly line?: number;
  readonly runId?: number;
  /** A Needs you item's key. */
  readonly needsKey?: string;
}

export interface TreeNode {
  /** Stable across refreshes: the tree keeps expansion and selection by it. */
  readonly id: string;
  readonly kind: NodeKind;
  readonly label: string;
  readonly description?: string;
  /** For rows whose description moves with the clock (leases, running runs, "5m ago"): the description at `now`. */
  readonly live?: (now: Date) => { readonly text: string; readonly nextMs: number };
  /** Markdown, resolved lazily when the person hovers. */
  readonly tooltip?: () => string;
  readonly icon?: { readonly id: string; readonly color?: string };
  /** Checklist items: ticked or not. */
  readonly checked?: boolean;
  readonly contextValue: string;
  readonly collapsible: 'none' | 'collapsed' | 'expanded';
  readonly command?: { readonly command: string; readonly title: string };
  readonly ref: NodeRef;
  readonly children?: () => readonly TreeNode[];
}

/** What decides whether a row must be redrawn (everything but children and the lazy tooltip). */
export function nodeSignature(n: TreeNode): string {
  return JSON.stringify([n.label, n.description, n.icon, n.checked, n.contextValue, n.collapsible === 'none']);
}
