import type { FromWebview, ToWebview } from '../../src/protocol/messages.ts';
import { percent } from '../../src/shared/format.ts';

interface VsCodeApi {
  postMessage(message: FromWebview): void;
  getState(): unknown;
  setState(state: unknown): void;
}

declare function acquireVsCodeApi(): VsCodeApi;

/** The one handle on the host: typed posts, and a listener that only sees our message union. */
export const vscode: VsCodeApi = acquireVsCodeApi();

export function onMessage(handler: (message: ToWebview) => void): void {
  window.addEventListener('message', (event: MessageEvent<ToWebview>) => handler(event.data));
}

/** Builds DOM without innerHTML, so nothing from the store is ever parsed as markup. */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Record<string, string> = {},
  ...children: (Node | string | null | undefined | false)[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, v);
  for (const c of children)
    if (c !== null && c !== undefined && c !== false) el.append(typeof c === 'string' ? document.createTextNode(c) : c);
  return el;
}

export function svg<K extends keyof SVGElementTagNameMap>(
  tag: K,
  attrs: Record<string, string | number> = {},
  ...children: (Node | string)[]
): SVGElementTagNameMap[K] {
  const el = document.createElementNS('http://www.w3.org/2000/svg', tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  for (const c of children) el.append(typeof c === 'string' ? document.createTextNode(c) : c);
  return el;
}

/** A progress bar element (the CSS draws it); the text bars are in src/shared/format.ts. */
export function bar(done: number, total: number): HTMLElement {
  const pct = percent(done, total);
  const fill = h('div', { class: 'bar-fill' });
  fill.style.width = `${pct}%`;
  return h(
    'div',
    {
      class: 'bar',
      role: 'progressbar',
      'aria-valuenow': String(pct),
      'aria-valuemin': '0',
      'aria-valuemax': '100',
      title: `${done}/${total}`,
    },
    fill,
  );
}
