import * as vscode from 'vscode';
import { Disposable } from './lifecycle.ts';
import type { NeedsYou, NeedsYouAction } from './model/needsYou.ts';
import { needsYouNews } from './model/needsYouNews.ts';

const KEY = 'springfield.notifiedNeedsYou';

/**
 * A notification when an item enters Needs you, once per item: the items told are remembered in the
 * workspace state, so a reload does not repeat them (blocks are BlockNotifier's).
 */
export class NeedsYouNotifier extends Disposable {
  private readonly memento: vscode.Memento;
  private readonly act: (action: NeedsYouAction) => void;

  constructor(memento: vscode.Memento, act: (action: NeedsYouAction) => void) {
    super();
    this.memento = memento;
    this.act = act;
  }

  update(needs: NeedsYou): void {
    const told = this.memento.get<string[]>(KEY, []);
    const { fresh, keep } = needsYouNews(told, needs.items);
    if (fresh.length === 0 && keep.length === told.length) return;
    void this.memento.update(KEY, keep);
    for (const item of fresh)
      void vscode.window.showInformationMessage(`Springfield: ${item.text}`, item.label).then((choice) => {
        if (choice === item.label) this.act(item.action);
      });
  }
}
