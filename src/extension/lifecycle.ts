import type * as vscode from 'vscode';

/** Owns disposables; anything registered after disposal is disposed at once. */
export class Disposable implements vscode.Disposable {
  private readonly owned: vscode.Disposable[] = [];
  private disposed = false;

  /** Disposed already: work still in flight (a pass, a timer) must not touch what it owned. */
  protected get isDisposed(): boolean {
    return this.disposed;
  }

  protected register<T extends vscode.Disposable>(d: T): T {
    if (this.disposed) d.dispose();
    else this.owned.push(d);
    return d;
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    for (const d of this.owned.splice(0).reverse()) {
      try {
        d.dispose();
      } catch {
        // one failing disposable must not keep the others alive
      }
    }
  }
}
