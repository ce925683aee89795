import type { DashboardData } from '../../src/protocol/messages.ts';
import { ago, bar, countdown, h, onMessage, vscode } from '../common/vscodeApi.ts';
import { dependencyGraph } from './graph.ts';

let data: DashboardData | undefined;
let skew = 0;
const app = document.getElementById('app') as HTMLElement;

onMessage((m) => {
  if (m.type !== 'dashboard') return;
  data = m.data;
  skew = Date.parse(m.data.now) - Date.now();
  render();
});
vscode.postMessage({ type: 'ready' });
setInterval(tick, 1000);

/** Lease countdowns move every second without a round trip to the host. */
function tick(): void {
  for (const el of Array.from(document.querySelectorAll<HTMLElement>('[data-expires]'))) {
    const at = el.dataset.expires ?? '';
    const left = Date.parse(at) - (Date.now() + skew);
    el.textContent = countdown(at, Date.now() + skew);
    el.classList.toggle('warn', left < 10 * 60_000);
  }
}

function figure(label: string, value: string | number): HTMLElement {
  return h('div', { class: 'figure' }, h('div', { class: 'figure-value' }, String(value)), h('div', { class: 'figure-label' }, label));
}

function render(): void {
  if (!data) return;
  const d = data;
  const statuses = Object.entries(d.figures.byStatus).map(([s, n]) => `${n} ${s.replace('_', ' ')}`).join(' · ') || 'no epics';
  const figures = h('section', { class: 'figures' },
    figure('epics', statuses), figure('agents running', d.figures.agentsRunning), figure('steps claimed', d.figures.stepsClaimed), figure('sessions this week', d.figures.sessionsThisWeek));
  const cards = h('section', { class: 'cards' }, ...d.epics.map((e) => h('article', { class: `card ${e.planPath === d.selectedPlan ? 'selected' : ''}` },
    h('div', { class: 'card-head' }, h('span', { class: `pill ${e.status}` }, e.status.replace('_', ' ')), h('strong', {}, `${e.id}`), ` ${e.title}`),
    h('div', { class: 'muted' }, `${e.complexity} · iteration ${e.iteration}/${e.budget}${e.awaitingApproval ? ' · plan awaiting approval' : ''}`),
    bar(e.stepsDone, e.stepsTotal), h('div', { class: 'muted' }, `${e.stepsDone}/${e.stepsTotal} steps`),
    h('div', { class: 'muted' }, sessionsText(e.sessions)))));
  for (const [i, card] of Array.from(cards.children).entries()) {
    const plan = d.epics[i]?.planPath;
    if (plan) card.addEventListener('click', () => vscode.postMessage({ type: 'selectPlan', planPath: plan }));
  }
  const select = h('select', { 'aria-label': 'Plan' }, ...d.plans.map((p) => {
    const o = h('option', { value: p.planPath }, `${p.title} (${p.stepsDone}/${p.stepsTotal})`);
    if (p.planPath === d.selectedPlan) o.setAttribute('selected', 'true');
    return o;
  }));
  select.addEventListener('change', () => vscode.postMessage({ type: 'selectPlan', planPath: (select as HTMLSelectElement).value }));
  const graph = h('section', { class: 'panel' }, h('h2', {}, 'Dependency graph '), d.plans.length > 1 ? select : null,
    d.graph && d.selectedPlan ? dependencyGraph(d.graph, (anchor) => vscode.postMessage({ type: 'openStep', planPath: d.selectedPlan as string, anchor })) : h('p', { class: 'muted' }, 'No plan yet.'));
  const leases = h('section', { class: 'panel' }, h('h2', {}, 'Leases'), d.leases.length === 0 ? h('p', { class: 'muted' }, 'No step is claimed.')
    : h('table', {}, ...d.leases.map((l) => h('tr', {}, h('td', {}, l.anchor), h('td', {}, l.agent ?? l.holder.split('/').at(-1) ?? l.holder), h('td', { class: 'num', 'data-expires': l.expiresAt }, countdown(l.expiresAt, Date.now() + skew))))));
  const runs = h('section', { class: 'panel' }, h('h2', {}, 'Runs'), d.runs.length === 0 ? h('p', { class: 'muted' }, 'No agent runs yet.')
    : h('table', {}, ...d.runs.map((r) => h('tr', {}, h('td', {}, r.role), h('td', {}, [r.epicId, r.step].filter(Boolean).join(' · ')), h('td', {}, r.status + (r.exitCode !== null ? ` (${r.exitCode})` : '')), h('td', { class: 'muted' }, ago(r.startedAt))))));
  const evidence = h('section', { class: 'panel' }, h('h2', {}, 'Verification'), d.verifications.length === 0 ? h('p', { class: 'muted' }, 'No verification results yet.')
    : h('table', {}, ...d.verifications.map((v) => h('tr', {}, h('td', { class: v.verdict === 'pass' ? 'ok' : 'bad' }, v.verdict), h('td', {}, h('code', {}, v.command)), h('td', { class: 'num' }, `${(v.durationMs / 1000).toFixed(1)}s`), h('td', { class: 'muted' }, ago(v.at))))));
  const timeline = h('section', { class: 'panel timeline' }, h('h2', {}, 'Timeline'), h('ol', {}, ...d.events.map((e) => h('li', {}, h('span', { class: 'muted' }, `${ago(e.at)} `), h('strong', {}, e.who), ` ${e.what}`, e.reason ? h('span', { class: 'muted' }, ` — ${e.reason}`) : null))));
  app.replaceChildren(h('h1', {}, 'Springfield'), figures, cards, h('div', { class: 'grid' }, graph, leases, runs, evidence), timeline);
}

/** "sessions: 14 (lisa 1 · ralph 12 · bart 1)" */
function sessionsText(sessions: Readonly<Record<string, number>>): string {
  const entries = Object.entries(sessions);
  const total = entries.reduce((n, [, v]) => n + v, 0);
  return total === 0 ? 'no agent sessions yet' : `sessions: ${total} (${entries.map(([role, n]) => `${role} ${n}`).join(' · ')})`;
}
