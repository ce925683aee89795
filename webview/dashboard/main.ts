import type { DashboardData, DashboardEpic } from '../../src/protocol/messages.ts';
import { commandArgv, fullCommand, shortCommand } from '../../src/shared/commandText.ts';
import { agoText, countdown } from '../../src/shared/format.ts';
import { bar, h, onMessage, vscode } from '../common/vscodeApi.ts';
import { cut, dependencyGraph, STATUS_LABELS } from './graph.ts';
import { statsSection } from './stats.ts';
import { timelineSection, type Filters } from './timeline.ts';

let data: DashboardData | undefined;
let skew = 0;
let filters: Filters = readFilters();
let timelineShown = 0;
const app = document.getElementById('app') as HTMLElement;
const now = (): number => Date.now() + skew;

onMessage((m) => {
  if (m.type !== 'dashboard') return;
  data = m.data;
  skew = Date.parse(m.data.now) - Date.now();
  render();
});
vscode.postMessage({ type: 'ready' });
setInterval(tick, 1000);
let resizing: number | undefined;
window.addEventListener('resize', () => {
  clearTimeout(resizing);
  resizing = window.setTimeout(render, 120);
});

function readFilters(): Filters {
  const state = vscode.getState() as { filters?: Filters } | undefined;
  return state?.filters ?? { epic: '', role: '', kind: '' };
}

/** Countdowns and "5m ago" move every second without a round trip to the host. */
function tick(): void {
  for (const el of Array.from(document.querySelectorAll<HTMLElement>('[data-expires]'))) {
    const at = el.dataset.expires ?? '';
    el.textContent = countdown(Date.parse(at) - now());
    el.classList.toggle('warn', Date.parse(at) - now() < 10 * 60_000);
  }
  for (const el of Array.from(document.querySelectorAll<SVGTextElement>('[data-node-lease]'))) {
    el.textContent = cut(
      `${el.getAttribute('data-prefix') ?? ''}${countdown(Date.parse(el.getAttribute('data-node-lease') ?? '') - now())}`,
      Number(el.getAttribute('data-max') ?? 40),
    );
  }
  for (const el of Array.from(document.querySelectorAll<HTMLElement>('[data-ago]')))
    el.textContent = agoText(now() - Date.parse(el.dataset.ago ?? ''));
}

const STATUS_ORDER = ['in_progress', 'implemented', 'verified', 'ready', 'planned', 'blocked', 'deferred', 'done'];
const words = (s: string): string => s.replace(/_/g, ' ');

function figure(label: string, value: string | number, detail?: string): HTMLElement {
  return h(
    'div',
    { class: 'figure' },
    h('div', { class: 'figure-value' }, String(value)),
    h('div', { class: 'figure-label' }, label),
    detail ? h('div', { class: 'figure-detail', title: detail }, detail) : null,
  );
}

function button(label: string, onClick: () => void, kind = 'secondary'): HTMLButtonElement {
  const b = h('button', { class: `${kind} small` }, label);
  b.addEventListener('click', (e) => {
    e.stopPropagation();
    onClick();
  });
  return b;
}

function card(d: DashboardData, e: DashboardEpic): HTMLElement {
  const sessions = Object.entries(e.sessions);
  const total = sessions.reduce((n, [, v]) => n + v, 0);
  const el = h(
    'article',
    {
      class: `card ${e.planPath && e.planPath === d.selectedPlan ? 'selected' : ''}`,
      tabindex: '0',
      'aria-label': `${e.id} ${e.title}, ${e.paused ? 'paused' : words(e.status)}`,
    },
    h(
      'div',
      { class: 'card-head' },
      // Paused by its budget, as the tree says it (its status is blocked).
      h('span', { class: `pill ${e.status}` }, e.paused ? 'paused' : words(e.status)),
      h('span', { class: 'card-id' }, e.id),
      // Only a complexity that changes what a person does is worth a word on the card (a critical merge waits for them).
      e.complexity === 'critical'
        ? h(
            'span',
            { class: 'muted', title: 'critical: Bart must review, and its merge waits for your approval' },
            'critical',
          )
        : null,
    ),
    h('div', { class: 'card-title', title: `${e.title} (${e.id}, ${e.complexity})` }, e.title),
    e.worktree
      ? h('div', { class: 'muted card-meta worktree', title: e.worktree.path }, `worktree ${e.worktree.name}`)
      : null,
    e.awaitingApproval
      ? h('div', { class: 'note' }, 'Plan waiting for your approval')
      : e.paused
        ? h(
            'div',
            { class: 'note bad paused', title: e.paused },
            `Paused: ${e.paused.replace(/^paused — budget_exhausted: /, 'budget spent, ').replace(/; raise .*$/, '')}`,
          )
        : e.blockedReason
          ? h('div', { class: 'note bad' }, `Blocked: ${e.blockedReason}`)
          : e.limitWait
            ? h(
                'div',
                {
                  class: 'note warn limit-wait',
                  title: 'No run of a limited preset starts before its reset (docs/agents.md)',
                },
                e.limitWait,
              )
            : null,
    ...e.conflictsAhead.slice(0, 1).map((c) =>
      h(
        'div',
        {
          class: 'note warn conflict-ahead',
          title: `A test merge of its branch with ${c.withTitle} conflicts in ${c.files.join(', ')} (nothing touched)`,
        },
        `Conflict ahead with ${c.withTitle} in ${c.files[0] ?? ''}${c.files.length > 1 ? ` (+${c.files.length - 1})` : ''}${e.conflictsAhead.length > 1 ? ` · ${e.conflictsAhead.length - 1} more` : ''}`,
      ),
    ),
    e.conflictsAtMerge ? h('div', { class: 'muted card-meta conflict-rate' }, e.conflictsAtMerge) : null,
    bar(e.stepsDone, e.stepsTotal),
    h(
      'div',
      { class: 'muted card-meta' },
      e.stepsTotal ? `${e.stepsDone} of ${e.stepsTotal} steps` : 'no approved plan yet',
      ` · iteration ${e.iteration} of ${e.budget}`,
    ),
    h(
      'div',
      { class: 'muted card-meta' },
      total === 0
        ? 'no agent sessions yet'
        : `${total} agent session${total === 1 ? '' : 's'}: ${sessions.map(([r, n]) => `${r} ${n}`).join(', ')}`,
    ),
    // Against a budget the spend is shown with its bar; without one, what the runs reported.
    ...e.spend.map((l) =>
      h(
        'div',
        {
          class: `card-meta spend ${l.share >= 1 ? 'bad' : 'muted'}`,
          title: `${l.own ? 'its own budget' : 'the budget of .springfield/config.json'}; docs/budgets.md`,
        },
        spendBar(l.share),
        ` ${l.text}`,
      ),
    ),
    e.spend.length === 0 && (e.costUsd !== null || e.tokens !== null)
      ? h(
          'div',
          { class: 'muted card-meta' },
          [
            e.costUsd !== null ? `$${e.costUsd.toFixed(2)}` : null,
            e.tokens !== null ? `${e.tokens.toLocaleString('en-US')} tokens` : null,
          ]
            .filter(Boolean)
            .join(' · '),
        )
      : null,
    h(
      'div',
      { class: 'card-actions' },
      e.paused
        ? button('Raise budget…', () => vscode.postMessage({ type: 'needsYou', key: `paused:${e.id}` }), 'primary')
        : e.retryable
          ? retryButton(e.id)
          : null,
      button('Show in tree', () => vscode.postMessage({ type: 'openEpic', epicId: e.id, target: 'tree' })),
      e.planPath || e.awaitingApproval
        ? button(e.awaitingApproval ? 'Review plan' : 'Open plan', () =>
            vscode.postMessage({ type: 'openEpic', epicId: e.id, target: 'plan' }),
          )
        : null,
    ),
  );
  const select = () => {
    if (e.planPath) vscode.postMessage({ type: 'selectPlan', planPath: e.planPath });
  };
  el.addEventListener('click', select);
  el.addEventListener('keydown', (k) => {
    if (k.key === 'Enter') select();
  });
  return el;
}

/** A small bar of the share of a budget spent (set through the CSSOM: the webview's policy allows no inline style). */
function spendBar(share: number): HTMLElement {
  const fill = h('span', {});
  fill.style.width = `${Math.min(100, Math.round(share * 100))}%`;
  return h('span', { class: 'spend-bar' }, fill);
}

/** Retry on the card of an epic a failing agent or a drifted plan blocked: the host lifts the block. */
function retryButton(epicId: string): HTMLElement {
  const b = button('Retry', () => vscode.postMessage({ type: 'retryEpic', epicId }), 'primary');
  b.classList.add('retry');
  b.title = `Fix the cause first, then start it again (springfield epic retry ${epicId})`;
  return b;
}

function graphSection(d: DashboardData): HTMLElement {
  const plan = d.plans.find((p) => p.planPath === d.selectedPlan);
  const select = h(
    'select',
    { 'aria-label': 'Plan shown in the graph' },
    ...d.plans.map((p) => {
      const o = h(
        'option',
        { value: p.planPath },
        `${p.epicId ? `${p.epicId} · ` : ''}${p.title} (${p.stepsDone}/${p.stepsTotal})`,
      );
      if (p.planPath === d.selectedPlan) o.setAttribute('selected', 'true');
      return o;
    }),
  );
  select.addEventListener('change', () =>
    vscode.postMessage({ type: 'selectPlan', planPath: (select as HTMLSelectElement).value }),
  );
  const legend = h(
    'div',
    { class: 'legend' },
    ...STATUS_LABELS.map(([s, label]) => h('span', { class: `swatch ${s}` }, label)),
  );
  const width = Math.max(280, app.clientWidth - 26);
  const body =
    d.graph && d.selectedPlan
      ? dependencyGraph(d.graph, width, now, (anchor) =>
          vscode.postMessage({ type: 'openStep', planPath: d.selectedPlan as string, anchor }),
        )
      : h('p', { class: 'muted' }, 'No plan yet: create an epic and approve its plan, and its steps show here.');
  return h(
    'section',
    { class: 'panel graph-panel' },
    h(
      'div',
      { class: 'panel-head' },
      h('h2', {}, plan ? `Steps of “${plan.title}”` : 'Steps'),
      d.plans.length > 1 ? select : null,
    ),
    d.graph ? legend : null,
    body,
  );
}

function leasesSection(d: DashboardData): HTMLElement {
  return h(
    'section',
    { class: 'panel leases' },
    h('h2', {}, 'Claimed steps'),
    d.leases.length === 0
      ? h('p', { class: 'muted' }, 'No step is claimed.')
      : h(
          'table',
          {},
          h(
            'thead',
            {},
            h(
              'tr',
              {},
              h('th', {}, 'Step'),
              h('th', {}, 'Epic and plan'),
              h('th', {}, 'Held by'),
              h('th', { class: 'num' }, 'Lease'),
            ),
          ),
          h(
            'tbody',
            {},
            ...d.leases.map((l) =>
              h(
                'tr',
                {},
                h('td', { title: `${l.step}: ${l.stepTitle}` }, h('strong', {}, l.step), ` ${l.stepTitle}`),
                // The epic by its title, the plan by its title (the id and the path on hover).
                h(
                  'td',
                  { class: 'muted', title: [l.epicId, l.planPath].filter(Boolean).join(' · ') },
                  l.epicId ? (l.epicTitle ?? l.epicId) : 'no epic',
                  l.epicId ? null : h('div', { class: 'sub' }, l.planTitle),
                ),
                h('td', { class: 'nowrap' }, l.holder),
                h(
                  'td',
                  { class: 'num nowrap', 'data-expires': l.expiresAt },
                  countdown(Date.parse(l.expiresAt) - now()),
                ),
              ),
            ),
          ),
        ),
  );
}

function runsSection(d: DashboardData): HTMLElement {
  return h(
    'section',
    { class: 'panel' },
    h('h2', {}, 'Agent runs'),
    d.runs.length === 0
      ? h('p', { class: 'muted' }, 'No agent runs yet.')
      : h(
          'table',
          {},
          h(
            'tbody',
            {},
            ...d.runs.map((r) =>
              h(
                'tr',
                { title: [r.reason, r.outputTail].filter(Boolean).join('\n') },
                h('td', {}, h('strong', {}, r.role)),
                h(
                  'td',
                  { title: r.epicId ?? '' },
                  [r.epicId ? (d.epicTitles[r.epicId] ?? r.epicId) : null, r.step].filter(Boolean).join(' · '),
                ),
                h(
                  'td',
                  { class: r.status === 'running' ? '' : r.status === 'succeeded' ? 'ok' : 'bad' },
                  words(r.status) +
                    (r.exitCode !== null && r.status !== 'succeeded' ? ` (exit ${r.exitCode})` : '') +
                    (r.reason && r.reason !== `exit ${r.exitCode}` ? ` — ${r.reason}` : ''),
                ),
                h('td', { class: 'muted num', 'data-ago': r.startedAt }, agoText(now() - Date.parse(r.startedAt))),
              ),
            ),
          ),
        ),
  );
}

function verificationSection(d: DashboardData): HTMLElement {
  return h(
    'section',
    { class: 'panel' },
    h('h2', {}, 'Verification'),
    d.verifications.length === 0
      ? h('p', { class: 'muted' }, 'No verification results yet.')
      : h(
          'table',
          {},
          h(
            'tbody',
            {},
            ...d.verifications.map((v) =>
              h(
                'tr',
                {},
                h('td', { class: v.verdict === 'pass' ? 'ok' : 'bad' }, v.verdict === 'pass' ? 'passed' : 'failed'),
                // The program by its name and its arguments; the full command (paths and all) on hover.
                h(
                  'td',
                  { class: 'command', title: fullCommand(commandArgv(v.command)) },
                  h('code', {}, shortCommand(commandArgv(v.command))),
                ),
                h(
                  'td',
                  { class: 'muted', title: v.epicId ?? '' },
                  v.epicId ? (d.epicTitles[v.epicId] ?? v.epicId) : '',
                ),
                h('td', { class: 'num' }, `${(v.durationMs / 1000).toFixed(1)} s`),
                h('td', { class: 'muted num', 'data-ago': v.at }, agoText(now() - Date.parse(v.at))),
              ),
            ),
          ),
        ),
  );
}

function debtSection(d: DashboardData): HTMLElement {
  return h(
    'section',
    { class: 'panel' },
    h('h2', {}, 'Debt register'),
    d.debt.length === 0
      ? h('p', { class: 'muted' }, 'Nothing set aside.')
      : h(
          'table',
          {},
          h(
            'tbody',
            {},
            ...d.debt.map((x) =>
              h(
                'tr',
                {},
                h('td', { class: 'card-id' }, x.epicId),
                h('td', {}, x.title),
                h('td', { class: 'muted' }, x.reason),
                h('td', { class: 'muted num', 'data-ago': x.at }, agoText(now() - Date.parse(x.at))),
              ),
            ),
          ),
        ),
  );
}

/** What waits for the person, each with its button: the same list as the tree's "Needs you" row. */
function needsSection(d: DashboardData): HTMLElement | null {
  const { items, idle } = d.needsYou;
  if (items.length === 0 && !idle) return null;
  return h(
    'section',
    { class: 'panel needs', 'aria-label': 'Needs you' },
    h('h2', {}, items.length ? `Needs you (${items.length})` : 'Nothing needs you'),
    items.length
      ? h(
          'ul',
          { class: 'needs-list' },
          ...items.map((i) =>
            h(
              'li',
              {},
              h('span', { class: 'needs-text' }, i.text),
              button(i.label, () => vscode.postMessage({ type: 'needsYou', key: i.key }), 'primary'),
            ),
          ),
        )
      : null,
    idle ? h('p', { class: 'muted' }, idle) : null,
  );
}

function render(): void {
  if (!data) return;
  const d = data;
  const statuses = STATUS_ORDER.filter((s) => d.figures.byStatus[s])
    .map((s) => `${d.figures.byStatus[s]} ${words(s)}`)
    .join(' · ');
  const waiting = d.needsYou.items.length;
  const figures = h(
    'section',
    { class: 'figures' },
    figure(
      waiting === 1 ? 'needs you' : 'need you',
      waiting,
      waiting ? d.needsYou.items.map((i) => i.label).join(' · ') : 'nothing waits for you',
    ),
    figure(d.figures.epics === 1 ? 'epic' : 'epics', d.figures.epics, statuses || 'none yet'),
    figure(
      d.figures.agentsRunning === 1 ? 'agent running' : 'agents running',
      d.figures.agentsRunning,
      d.needsYou.fleet ?? undefined,
    ),
    figure(d.figures.stepsClaimed === 1 ? 'step claimed' : 'steps claimed', d.figures.stepsClaimed),
    figure('sessions this week', d.figures.sessionsThisWeek),
    figure(
      d.figures.today.limit ? `spent today of ${d.figures.today.limit}` : 'spent today',
      d.figures.today.usd,
      d.figures.today.spent
        ? 'daily budget spent: no new run starts until tomorrow (UTC)'
        : d.figures.today.limit
          ? 'the daily budget, all epics (UTC)'
          : 'all epics (UTC); no daily budget',
    ),
  );
  const cards = d.epics.length
    ? h('section', { class: 'cards' }, ...d.epics.map((e) => card(d, e)))
    : h('p', { class: 'muted' }, 'No epics yet.');
  const timeline = timelineSection(
    d,
    filters,
    (f) => {
      filters = f;
      vscode.setState({ filters });
      render();
    },
    now,
    {
      shown: timelineShown,
      onMore: () => {
        timelineShown = Math.max(timelineShown, 25) + 50;
        render();
      },
    },
  );
  const scroll = window.scrollY;
  app.replaceChildren(
    h('h1', {}, 'Springfield'),
    figures,
    needsSection(d) ?? '',
    cards,
    graphSection(d),
    h('div', { class: 'grid' }, leasesSection(d), runsSection(d), verificationSection(d), debtSection(d)),
    statsSection(d.stats),
    timeline,
  );
  window.scrollTo(0, scroll);
}
