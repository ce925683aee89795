import * as vscode from 'vscode';
import type { Snapshot } from '../model/snapshot.ts';
import { ChangeBatch } from './changeBatch.ts';
import { nodeSignature, type TreeNode } from './nodes.ts';

/** The element VS Code holds on to: one stable object per row id, so refreshes can name rows. */
export interface Row {
  readonly id: string;
}

/**
 * Adapts TreeNode descriptors to a VS Code tree. On each snapshot it recomputes only the rows the
 * person has seen and fires change events for exactly the rows that differ (or their parent when
 * the set of children changed).
 */
export class NodeTreeProvider implements vscode.TreeDataProvider<Row> {
  private readonly emitter = new vscode.EventEmitter<Row | Row[] | undefined>();
  readonly onDidChangeTreeData = this.emitter.event;
  private readonly liveShown = new vscode.EventEmitter<void>();
  /** A row whose description moves with the clock came on screen. */
  readonly onDidShowLiveRow = this.liveShown.event;
  private readonly rows = new Map<string, Row>();
  private readonly nodes = new Map<string, TreeNode>();
  private readonly childIds = new Map<string, string[]>();
  private readonly parents = new Map<string, Row>();
  private rootIds: string[] | undefined;
  private root: TreeNode[] = [];
  /** Rows on screen whose description moves with the clock, and the description VS Code last got for each row. */
  private readonly live = new Map<string, Row>();
  private readonly shown = new Map<string, string | undefined>();
  private readonly overrides = new Map<string, string>();
  private readonly build: (s: Snapshot) => TreeNode[];
  /** What changed, told to VS Code only when something did, at most every 250 ms and once it took up the last (changeBatch.ts). */
  private readonly batch = new ChangeBatch<Row>((rows) => this.emitter.fire(rows));

  constructor(build: (s: Snapshot) => TreeNode[]) {
    this.build = build;
  }

  node(row: Row): TreeNode | undefined {
    return this.nodes.get(row.id);
  }

  rowFor(id: string): Row | undefined {
    return this.rows.get(id);
  }

  /** Applies a new snapshot, firing the smallest set of change events. */
  update(snapshot: Snapshot): void {
    this.root = this.build(snapshot);
    this.live.clear();
    this.overrides.clear();
    if (this.rootIds === undefined) return this.batch.add(undefined);
    const changed = new Set<Row>();
    let rootChanged = !sameIds(
      this.rootIds,
      this.root.map((n) => n.id),
    );
    const visit = (nodes: readonly TreeNode[]) => {
      for (const n of nodes) {
        const old = this.nodes.get(n.id);
        this.nodes.set(n.id, n);
        const row = this.rows.get(n.id);
        if (row && n.live) this.live.set(n.id, row);
        if (row && !changed.has(row) && this.shown.has(n.id) && this.shown.get(n.id) !== n.description)
          changed.add(row);
        if (old && row && nodeSignature(old) !== nodeSignature(n)) changed.add(row);
        const seen = this.childIds.get(n.id);
        if (seen === undefined) continue;
        const kids = n.children?.() ?? [];
        if (
          !sameIds(
            seen,
            kids.map((k) => k.id),
          )
        ) {
          if (row) changed.add(row);
          this.childIds.delete(n.id);
          continue;
        }
        visit(kids);
      }
    };
    visit(this.root);
    if (rootChanged || changed.size > 300) {
      this.rootIds = undefined;
      rootChanged = true;
    }
    this.batch.add(rootChanged ? undefined : [...changed]);
  }

  getChildren(row?: Row): Row[] {
    this.batch.asked();
    const nodes = row ? (this.nodes.get(row.id)?.children?.() ?? []) : this.root;
    const ids = nodes.map((n) => n.id);
    if (row) this.childIds.set(row.id, ids);
    else this.rootIds = ids;
    return nodes.map((n) => {
      this.nodes.set(n.id, n);
      let r = this.rows.get(n.id);
      if (!r) {
        r = { id: n.id };
        this.rows.set(n.id, r);
      }
      if (row) this.parents.set(n.id, row);
      else this.parents.delete(n.id);
      if (n.live) {
        this.live.set(n.id, r);
        this.liveShown.fire();
      }
      return r;
    });
  }

  /**
   * Moves the clock-bound descriptions (lease countdowns, "running 3m", "5m ago") to `now`,
   * redrawing only the rows whose text changed. Returns the milliseconds until one next changes
   * (Infinity when no row on screen moves with the clock).
   */
  tick(now: Date): number {
    let next = Infinity;
    const changed: Row[] = [];
    for (const [id, row] of this.live) {
      const live = this.nodes.get(id)?.live?.(now);
      if (!live) continue;
      next = Math.min(next, live.nextMs);
      if (!this.shown.has(id) || this.shown.get(id) === live.text) continue;
      this.overrides.set(id, live.text);
      changed.push(row);
    }
    this.batch.add(changed);
    return next;
  }

  getTreeItem(row: Row): vscode.TreeItem {
    this.batch.asked();
    const n = this.nodes.get(row.id);
    if (!n) return new vscode.TreeItem('…');
    const item = new vscode.TreeItem(
      n.label,
      n.collapsible === 'none'
        ? vscode.TreeItemCollapsibleState.None
        : n.collapsible === 'expanded'
          ? vscode.TreeItemCollapsibleState.Expanded
          : vscode.TreeItemCollapsibleState.Collapsed,
    );
    item.id = n.id;
    item.description = this.overrides.get(n.id) ?? n.description;
    this.shown.set(n.id, item.description);
    item.contextValue = n.contextValue;
    if (n.icon)
      item.iconPath = new vscode.ThemeIcon(n.icon.id, n.icon.color ? new vscode.ThemeColor(n.icon.color) : undefined);
    if (n.checked !== undefined)
      item.checkboxState = n.checked ? vscode.TreeItemCheckboxState.Checked : vscode.TreeItemCheckboxState.Unchecked;
    if (n.command) item.command = { ...n.command, arguments: [row] };
    return item;
  }

  resolveTreeItem(item: vscode.TreeItem, row: Row): vscode.TreeItem {
    const tip = this.nodes.get(row.id)?.tooltip?.();
    if (tip) item.tooltip = new vscode.MarkdownString(tip);
    return item;
  }

  getParent(row: Row): Row | undefined {
    return this.parents.get(row.id);
  }

  /** The row for `id`, materialising its ancestors (via `path`, root first) so VS Code can reveal it. */
  materialise(path: readonly string[]): Row | undefined {
    let parent: Row | undefined;
    for (const id of path) {
      const kids = this.getChildren(parent);
      parent = kids.find((k) => k.id === id);
      if (!parent) return undefined;
    }
    return parent;
  }
}

function sameIds(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}
