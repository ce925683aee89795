// The dashboard's Stats view (docs/stats.md): three charts in plain SVG coloured by the theme's chart
// colours (webview/styles/dashboard.css), each a focusable figure whose label says what it shows, with
// the numbers it is drawn from in a table under it.
import type { StatsDto } from '../../src/protocol/messages.ts';
import { h, svg } from '../common/vscodeApi.ts';

const W = 320;
const H = 150;
const PAD = { left: 40, right: 10, top: 10, bottom: 24 };
const PALETTE = 6;

const money = (n: number): string => `$${n.toFixed(2)}`;
const pct = (n: number): string => `${Math.round(n * 100)}%`;

/** A chart: a caption, the SVG (an image named by `summary`) and its numbers. */
function chart(
  title: string,
  summary: string,
  drawing: SVGSVGElement,
  head: readonly string[],
  rows: readonly (readonly string[])[],
  legend: readonly string[] = [],
): HTMLElement {
  drawing.setAttribute('role', 'img');
  drawing.setAttribute('aria-label', summary);
  return h(
    'figure',
    { class: 'chart', tabindex: '0', 'aria-label': `${title}: ${summary}` },
    h('figcaption', {}, title),
    legend.length
      ? h(
          'ul',
          { class: 'chart-legend' },
          ...legend.map((name, i) => h('li', {}, h('span', { class: `chart-swatch series-${i % PALETTE}` }), name)),
        )
      : null,
    drawing,
    h(
      'details',
      {},
      h('summary', {}, 'Numbers'),
      h(
        'table',
        {},
        h('thead', {}, h('tr', {}, ...head.map((c) => h('th', {}, c)))),
        h('tbody', {}, ...rows.map((r) => h('tr', {}, ...r.map((c) => h('td', {}, c))))),
      ),
    ),
  );
}

function frame(): SVGSVGElement {
  return svg('svg', { viewBox: `0 0 ${W} ${H}`, class: 'chart-svg' });
}

function axis(el: SVGSVGElement, max: number, label: (n: number) => string): (v: number) => number {
  const y = (v: number) => H - PAD.bottom - (v / (max || 1)) * (H - PAD.top - PAD.bottom);
  for (const v of [0, max / 2, max]) {
    el.append(svg('line', { x1: PAD.left, x2: W - PAD.right, y1: y(v), y2: y(v), class: 'chart-grid' }));
    el.append(svg('text', { x: PAD.left - 4, y: y(v) + 3, class: 'chart-axis', 'text-anchor': 'end' }, label(v)));
  }
  return y;
}

function costChart(s: StatsDto): HTMLElement {
  const { weeks, series } = s.costOverTime;
  const el = frame();
  const max = Math.max(0, ...series.flatMap((x) => x.points.map((p) => p.costPerStep)));
  const y = axis(el, max, money);
  const x = (week: string) =>
    PAD.left + ((weeks.indexOf(week) + 0.5) / Math.max(weeks.length, 1)) * (W - PAD.left - PAD.right);
  weeks.forEach((w) =>
    el.append(svg('text', { x: x(w), y: H - 8, class: 'chart-axis', 'text-anchor': 'middle' }, w.slice(5))),
  );
  series.forEach((line, i) => {
    const cls = `series-${i % PALETTE}`;
    el.append(
      svg('polyline', {
        points: line.points.map((p) => `${x(p.week)},${y(p.costPerStep)}`).join(' '),
        class: `chart-line ${cls}`,
      }),
    );
    for (const p of line.points)
      el.append(
        svg(
          'circle',
          { cx: x(p.week), cy: y(p.costPerStep), r: 3, class: `chart-dot ${cls}` },
          svg('title', {}, `${line.preset}, week of ${p.week}: ${money(p.costPerStep)} per merged step (${p.steps})`),
        ),
      );
  });
  const latest = series.map((l) => `${l.preset} ${money(l.points.at(-1)?.costPerStep ?? 0)}`).join(', ');
  return chart(
    'Cost per merged step, by preset and week',
    weeks.length ? `latest week: ${latest}` : 'no merged steps in these weeks',
    el,
    ['preset', 'week of', 'merged steps', 'cost per step'],
    series.flatMap((l) => l.points.map((p) => [l.preset, p.week, String(p.steps), money(p.costPerStep)])),
    series.map((l) => l.preset),
  );
}

function barChart(
  bars: readonly { label: string; value: number; series: number; marker?: number }[],
  max: number,
  label: (n: number) => string,
): SVGSVGElement {
  const el = frame();
  const y = axis(el, max, label);
  const slot = (W - PAD.left - PAD.right) / Math.max(bars.length, 1);
  bars.forEach((b, i) => {
    const x0 = PAD.left + i * slot + slot * 0.15;
    const top = y(b.value);
    el.append(
      svg(
        'rect',
        {
          x: x0,
          y: top,
          width: slot * 0.7,
          height: H - PAD.bottom - top,
          class: `chart-bar series-${b.series % PALETTE}`,
        },
        svg('title', {}, `${b.label}: ${label(b.value)}`),
      ),
    );
    if (b.marker !== undefined)
      el.append(
        svg('line', { x1: x0 - 2, x2: x0 + slot * 0.7 + 2, y1: y(b.marker), y2: y(b.marker), class: 'chart-marker' }),
      );
    el.append(svg('text', { x: x0 + slot * 0.35, y: H - 8, class: 'chart-axis', 'text-anchor': 'middle' }, b.label));
  });
  return el;
}

function acceptanceChart(s: StatsDto): HTMLElement {
  const presets = [...new Set(s.acceptance.map((a) => a.preset))];
  const bars = s.acceptance.map((a) => ({ label: a.kind, value: a.rate, series: presets.indexOf(a.preset) }));
  return chart(
    'First-pass review acceptance, by preset and kind of step',
    s.acceptance.length
      ? s.acceptance.map((a) => `${a.preset} on ${a.kind} ${a.accepted}/${a.reviewed}`).join(', ')
      : 'no reviews in these weeks',
    barChart(bars, 1, pct),
    ['preset', 'kind', 'first-pass', 'rate'],
    s.acceptance.map((a) => [a.preset, a.kind, `${a.accepted}/${a.reviewed}`, pct(a.rate)]),
    presets,
  );
}

function sessionsChart(s: StatsDto): HTMLElement {
  const max = Math.max(0, ...s.sessions.flatMap((x) => [x.perStep, x.seed]));
  const fmt = (n: number) => String(Math.round(n * 10) / 10);
  return chart(
    'Sessions per merged step, by preset (line: the seed’s steps + 2 per epic)',
    s.sessions.length
      ? s.sessions.map((x) => `${x.preset} ${fmt(x.perStep)} (seed ${fmt(x.seed)})`).join(', ')
      : 'no merged steps in these weeks',
    barChart(
      s.sessions.map((x, i) => ({ label: x.preset, value: x.perStep, series: i, marker: x.seed })),
      max,
      fmt,
    ),
    ['preset', 'merged steps', 'sessions per step', 'seed'],
    s.sessions.map((x) => [x.preset, String(x.steps), fmt(x.perStep), fmt(x.seed)]),
  );
}

/** The Stats section of the dashboard. */
export function statsSection(s: StatsDto): HTMLElement {
  return h(
    'section',
    { class: 'panel stats', 'aria-label': 'Stats' },
    h('h2', {}, `Stats since ${s.since.slice(0, 10)}`),
    h('div', { class: 'charts' }, costChart(s), acceptanceChart(s), sessionsChart(s)),
    h('p', { class: 'muted' }, 'Every figure: springfield stats --help and docs/stats.md.'),
  );
}
