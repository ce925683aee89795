import type { DashboardData, GraphNode } from '../../src/protocol/messages.ts';
import { countdown } from '../../src/shared/format.ts';
import { svg } from '../common/vscodeApi.ts';

type Graph = NonNullable<DashboardData['graph']>;

const NODE_W = 224;
const MIN_W = 150;
const NODE_H = 44;
const GAP_X = 18;
const GAP_Y = 30;
const PAD = 8;

/** The words a node's status reads as, and the legend's order: a claimed step is held but not started yet. */
export const STATUS_LABELS: readonly (readonly [string, string])[] = [
  ['completed', 'completed'],
  ['in_progress', 'started'],
  ['claimed', 'claimed, not started'],
  ['expired', 'lease expired'],
  ['ready', 'ready'],
  ['waiting', 'waiting'],
];

/** Longest-path layer of each step: a step sits one row below the deepest step it depends on. */
function layers(graph: Graph): Map<string, number> {
  const layer = new Map<string, number>();
  const deps = new Map<string, string[]>();
  for (const [from, to] of graph.edges) deps.set(to, [...(deps.get(to) ?? []), from]);
  const depth = (a: string, seen: Set<string>): number => {
    const known = layer.get(a);
    if (known !== undefined) return known;
    if (seen.has(a)) return 0;
    seen.add(a);
    const d = Math.max(-1, ...(deps.get(a) ?? []).map((x) => depth(x, seen))) + 1;
    layer.set(a, d);
    return d;
  };
  for (const n of graph.nodes) depth(n.anchor, new Set());
  return layer;
}

/**
 * Lays the plan's steps out top to bottom in dependency layers, wrapping a layer that is wider than
 * `width` onto more rows, so the graph always fits the panel's width (no horizontal scroll).
 */
export function layout(
  graph: Graph,
  width: number,
): { pos: Map<string, { x: number; y: number }>; width: number; height: number; nodeW: number } {
  const layer = layers(graph);
  const rows = new Map<number, GraphNode[]>();
  for (const n of graph.nodes) rows.set(layer.get(n.anchor) ?? 0, [...(rows.get(layer.get(n.anchor) ?? 0) ?? []), n]);
  const usable = Math.max(MIN_W, width - 2 * PAD);
  // Narrower nodes before a wrapped layer: a wrapped layer's arrows cross its other row.
  const widest = Math.max(1, ...[...rows.values()].map((r) => r.length));
  const nodeW = Math.min(NODE_W, usable, Math.max(MIN_W, Math.floor((usable - (widest - 1) * GAP_X) / widest)));
  const perRow = Math.max(1, Math.floor((usable + GAP_X) / (nodeW + GAP_X)));
  const pos = new Map<string, { x: number; y: number }>();
  let y = PAD;
  for (const l of [...rows.keys()].sort((a, b) => a - b)) {
    const nodes = rows.get(l) ?? [];
    for (let i = 0; i < nodes.length; i += perRow) {
      const line = nodes.slice(i, i + perRow);
      const span = line.length * nodeW + (line.length - 1) * GAP_X;
      let x = PAD + (usable - span) / 2;
      for (const n of line) {
        pos.set(n.anchor, { x, y });
        x += nodeW + GAP_X;
      }
      y += NODE_H + GAP_Y;
    }
  }
  return { pos, width: Math.max(width, nodeW + 2 * PAD), height: y - GAP_Y + PAD, nodeW };
}

/** Cuts `text` to `max` characters, with an ellipsis. */
export function cut(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, Math.max(1, max - 1))}…` : text;
}

/** Cuts `text` to what fits in `px` at about 6.6 px a character. */
function fit(text: string, px: number): string {
  return cut(text, Math.max(4, Math.floor(px / 6.6)));
}

/** The dependency graph as SVG: status fills, arrows from a step to the steps that wait for it. */
export function dependencyGraph(
  graph: Graph,
  width: number,
  now: () => number,
  onClick: (anchor: string) => void,
): SVGSVGElement {
  const { pos, width: w, height, nodeW } = layout(graph, width);
  const root = svg('svg', {
    class: 'graph',
    viewBox: `0 0 ${w} ${height}`,
    width: '100%',
    height,
    role: 'img',
    'aria-label': `Dependency graph of ${graph.nodes.length} steps`,
  });
  root.append(
    svg(
      'defs',
      {},
      svg(
        'marker',
        {
          id: 'arrow',
          viewBox: '0 0 10 10',
          refX: 9,
          refY: 5,
          markerWidth: 7,
          markerHeight: 7,
          orient: 'auto-start-reverse',
        },
        svg('path', { d: 'M 0 0 L 10 5 L 0 10 z', class: 'arrow-head' }),
      ),
    ),
  );
  for (const [from, to] of graph.edges) {
    const a = pos.get(from);
    const b = pos.get(to);
    if (!a || !b) continue;
    const x1 = a.x + nodeW / 2;
    const y1 = a.y + NODE_H;
    const x2 = b.x + nodeW / 2;
    const y2 = b.y - 2;
    const bend = Math.max(12, (y2 - y1) / 2);
    root.append(
      svg('path', {
        class: 'edge',
        d: `M${x1},${y1} C${x1},${y1 + bend} ${x2},${y2 - bend} ${x2},${y2}`,
        'marker-end': 'url(#arrow)',
      }),
    );
  }
  for (const n of graph.nodes) {
    const p = pos.get(n.anchor);
    if (!p) continue;
    const label = STATUS_LABELS.find(([s]) => s === n.status)?.[1] ?? n.status.replace(/_/g, ' ');
    // The fill says claimed or in progress (see the legend), so the line under the title leaves room for who and how long.
    const prefix = n.status === 'expired' ? `${n.holder ?? 'nobody'} · lease ` : n.holder ? `${n.holder} · ` : label;
    const detail = n.lease ? `${prefix}${countdown(Date.parse(n.lease) - now())}` : prefix.replace(/ · (lease )?$/, '');
    const sub = svg('text', { x: 10, y: 34, class: 'node-detail' }, fit(detail, nodeW - 20));
    if (n.lease) {
      // The countdown moves every second (see tick() in main.ts) without drawing the graph again.
      sub.setAttribute('data-node-lease', n.lease);
      sub.setAttribute('data-prefix', prefix);
      sub.setAttribute('data-max', String(Math.max(4, Math.floor((nodeW - 20) / 6.6))));
    }
    const g = svg(
      'g',
      {
        class: `node ${n.status}`,
        transform: `translate(${p.x},${p.y})`,
        tabindex: 0,
        role: 'button',
        'aria-label': `${n.name}: ${n.title}, ${label}${n.holder ? `, ${n.holder}` : ''}`,
      },
      svg('rect', { width: nodeW, height: NODE_H, rx: 6 }),
      svg(
        'text',
        { x: 10, y: 17, class: 'node-title' },
        svg('tspan', { class: 'node-name' }, `${n.name} `),
        fit(n.title, nodeW - 20 - n.name.length * 7),
      ),
      sub,
      svg(
        'title',
        {},
        `${n.name}: ${n.title}\n${label}${n.holder ? ` · ${n.holder}` : ''}\nClick to open it in the plan`,
      ),
    );
    g.addEventListener('click', () => onClick(n.anchor));
    g.addEventListener('keydown', (e) => {
      if (e.key === 'Enter' || e.key === ' ') onClick(n.anchor);
    });
    root.append(g);
  }
  return root;
}
