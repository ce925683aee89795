import type { DashboardData } from '../../src/protocol/messages.ts';
import { svg } from '../common/vscodeApi.ts';

type Graph = NonNullable<DashboardData['graph']>;

/** Lays the plan's steps out in layers by longest dependency path and draws them as a small SVG. */
export function dependencyGraph(graph: Graph, onClick: (anchor: string) => void): SVGSVGElement {
  const layer = new Map<string, number>();
  const deps = new Map<string, string[]>();
  for (const [from, to] of graph.edges) deps.set(to, [...(deps.get(to) ?? []), from]);
  const depth = (a: string, seen = new Set<string>()): number => {
    const known = layer.get(a);
    if (known !== undefined) return known;
    if (seen.has(a)) return 0;
    seen.add(a);
    const d = Math.max(-1, ...(deps.get(a) ?? []).map((x) => depth(x, seen))) + 1;
    layer.set(a, d);
    return d;
  };
  graph.nodes.forEach((n) => depth(n.anchor));
  const columns = new Map<number, string[]>();
  for (const n of graph.nodes) {
    const l = layer.get(n.anchor) ?? 0;
    columns.set(l, [...(columns.get(l) ?? []), n.anchor]);
  }
  const W = 150, H = 34, GX = 40, GY = 12;
  const pos = new Map<string, { x: number; y: number }>();
  for (const [l, anchors] of columns) anchors.forEach((a, i) => pos.set(a, { x: 8 + l * (W + GX), y: 8 + i * (H + GY) }));
  const width = 16 + Math.max(1, columns.size) * (W + GX) - GX;
  const height = 16 + Math.max(1, ...[...columns.values()].map((c) => c.length)) * (H + GY) - GY;
  const root = svg('svg', { class: 'graph', viewBox: `0 0 ${width} ${height}`, width, height, role: 'img', 'aria-label': 'Step dependency graph' });
  for (const [from, to] of graph.edges) {
    const a = pos.get(from), b = pos.get(to);
    if (!a || !b) continue;
    root.append(svg('path', { class: 'edge', d: `M${a.x + W},${a.y + H / 2} C${a.x + W + GX / 2},${a.y + H / 2} ${b.x - GX / 2},${b.y + H / 2} ${b.x},${b.y + H / 2}` }));
  }
  for (const n of graph.nodes) {
    const p = pos.get(n.anchor);
    if (!p) continue;
    const g = svg('g', { class: `node ${n.status}`, transform: `translate(${p.x},${p.y})`, tabindex: 0 },
      svg('rect', { width: W, height: H, rx: 5 }),
      svg('text', { x: 8, y: 14, class: 'node-anchor' }, n.anchor),
      svg('text', { x: 8, y: 27, class: 'node-title' }, n.title.length > 22 ? `${n.title.slice(0, 21)}…` : n.title),
      svg('title', {}, `${n.anchor}: ${n.title} — ${n.status}${n.holder ? ` · ${n.holder}` : ''}`));
    g.addEventListener('click', () => onClick(n.anchor));
    root.append(g);
  }
  return root;
}
