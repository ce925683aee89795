import { randomBytes } from 'node:crypto';
import * as vscode from 'vscode';
import { FromWebview, type ToWebview } from '../../protocol/messages.ts';
import { Disposable } from '../lifecycle.ts';

/**
 * One webview panel: strict CSP with a per-load nonce, scripts only from media/dist, a ready
 * handshake before anything is posted, and zod validation of every inbound message.
 */
export abstract class PanelHost extends Disposable {
  protected readonly panel: vscode.WebviewPanel;
  private ready = false;
  private readonly queue: ToWebview[] = [];

  constructor(panel: vscode.WebviewPanel, extensionUri: vscode.Uri, script: 'dashboard' | 'approval') {
    super();
    this.panel = panel;
    const dist = vscode.Uri.joinPath(extensionUri, 'media', 'dist');
    panel.webview.options = { enableScripts: true, localResourceRoots: [dist] };
    panel.webview.html = html(panel.webview, dist, script, panel.title);
    this.register(panel.webview.onDidReceiveMessage((raw: unknown) => this.receive(raw)));
    this.register(panel.onDidDispose(() => this.dispose()));
    this.register(panel);
  }

  protected post(message: ToWebview): void {
    if (!this.ready) {
      this.queue.push(message);
      return;
    }
    void this.panel.webview.postMessage(message);
  }

  protected abstract handle(message: Exclude<FromWebview, { type: 'ready' }>): Promise<void>;
  protected abstract onReady(): void;

  private async receive(raw: unknown): Promise<void> {
    const parsed = FromWebview.safeParse(raw);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      void vscode.window.showWarningMessage(
        `Springfield: ignored a malformed message from the ${this.panel.title} view (${issue ? `${issue.path.join('.') || 'message'}: ${issue.message}` : 'invalid'})`,
      );
      return;
    }
    if (parsed.data.type === 'ready') {
      this.ready = true;
      for (const m of this.queue.splice(0)) void this.panel.webview.postMessage(m);
      this.onReady();
      return;
    }
    await this.handle(parsed.data);
  }
}

function html(webview: vscode.Webview, dist: vscode.Uri, script: string, title: string): string {
  const nonce = randomBytes(16).toString('base64');
  const js = webview.asWebviewUri(vscode.Uri.joinPath(dist, `${script}.js`));
  const css = webview.asWebviewUri(vscode.Uri.joinPath(dist, `${script}.css`));
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; img-src ${webview.cspSource} data:; style-src ${webview.cspSource}; script-src 'nonce-${nonce}';">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${css}">
<title>${title.replace(/[<>&"]/g, '')}</title>
</head>
<body>
<main id="app" aria-live="polite"><p class="muted">Loading…</p></main>
<script nonce="${nonce}" src="${js}"></script>
</body>
</html>`;
}
