import type { ApprovalData, ToWebview } from '../../src/protocol/messages.ts';
import { agoText } from '../../src/shared/format.ts';
import { h, onMessage, vscode } from '../common/vscodeApi.ts';

let data: ApprovalData | undefined;
let nextRequest = 1;
let result: Extract<ToWebview, { type: 'result' }> | undefined;
let busy = false;
const app = document.getElementById('app') as HTMLElement;
const STEP_WORDS: Readonly<Record<string, string>> = {
  pending: 'not started',
  claimed: 'claimed, not started',
  in_progress: 'started',
  completed: 'completed',
};
const VERSION_WORDS: Readonly<Record<string, string>> = {
  proposed: 'waiting for your approval',
  changes_requested: 'changes requested',
};

onMessage((m) => {
  if (m.type === 'approval') {
    data = m.data;
    vscode.setState({ epicId: m.data.epic.id });
    // A result about another version (e.g. "Requested changes to version 1") goes once version 2 shows;
    // one about the epic as it was ("… when the epic starts") goes once the epic has moved on.
    if (result?.version !== undefined && result.version !== m.data.version?.version) result = undefined;
    if (result?.epicStatus !== undefined && result.epicStatus !== m.data.epic.status) result = undefined;
  } else if (m.type === 'result') {
    result = m;
    busy = false;
  }
  render();
});
vscode.postMessage({ type: 'ready' });

function decide(decision: 'approve' | 'requestChanges' | 'discard'): void {
  if (!data?.version || busy) return;
  const feedback = (document.getElementById('feedback') as HTMLTextAreaElement | null)?.value ?? '';
  busy = true;
  result = undefined;
  vscode.postMessage({
    type: 'decide',
    requestId: nextRequest++,
    decision,
    epicId: data.epic.id,
    version: data.version.version,
    feedback,
  });
  render();
}

function act(action: 'startEpic' | 'startAndClaim' | 'openHandoff'): void {
  if (!data || busy) return;
  if (action !== 'openHandoff') {
    busy = true;
    result = undefined;
  }
  vscode.postMessage({ type: 'act', requestId: nextRequest++, epicId: data.epic.id, action });
  render();
}

/** Where the epic is now, once its plan is approved and it has started: the panel follows it to done. */
const PROGRESS_WORDS: Readonly<Record<string, string>> = {
  in_progress: 'In progress',
  implemented: 'Built, waiting for verification and review',
  verified: 'Verified and reviewed, waiting to be merged',
  done: 'Done: merged into the main branch',
  blocked: 'Blocked',
  deferred: 'Set aside',
};

function progressLine(d: ApprovalData): HTMLElement | null {
  const paused = d.epic.paused ? `Paused: its budget is spent (${d.epic.paused})` : undefined;
  const words = d.version?.status === 'approved' ? (paused ?? PROGRESS_WORDS[d.epic.status]) : undefined;
  if (!words) return null;
  const steps = d.progress ? ` · ${d.progress.done} of ${d.progress.total} steps completed` : '';
  return h('section', { class: `progress ${d.epic.status}`, role: 'status' }, h('strong', {}, words), steps);
}

/** After approval: what happened is in the result; what to do next is here, for as long as the epic waits to start. */
function nextSection(d: ApprovalData): HTMLElement | null {
  const approved = d.version?.status === 'approved';
  const handoff = d.handoff ? h('a', { href: '#', id: 'open-handoff', role: 'button' }, d.handoff) : null;
  handoff?.addEventListener('click', (e) => {
    e.preventDefault();
    act('openHandoff');
  });
  const handoffLine = handoff
    ? h('p', {}, 'Handoff for the builders (intent, approach, constraints): ', handoff)
    : null;
  if (!approved || d.epic.status !== 'ready') return handoffLine ? h('section', { class: 'next' }, handoffLine) : null;
  const start = h('button', { class: 'primary', id: 'start-epic' }, 'Start epic');
  const claim = h('button', { class: 'secondary', id: 'start-and-claim' }, 'Start and claim the first step');
  start.addEventListener('click', () => act('startEpic'));
  claim.addEventListener('click', () => act('startAndClaim'));
  for (const b of [start, claim]) if (busy) b.setAttribute('disabled', 'true');
  return h(
    'section',
    { class: 'next' },
    h('h2', {}, 'Next: start the work'),
    h(
      'p',
      { class: 'muted' },
      'The plan is approved and the epic is ready. Starting it puts it in progress; claiming takes its first step for you, under a lease.',
    ),
    h('div', { class: 'buttons' }, start, claim),
    handoffLine,
  );
}

function render(): void {
  if (!data) return;
  const v = data.version;
  const header = h(
    'header',
    {},
    h('h1', {}, `Plan for ${data.epic.id} · ${data.epic.title}`),
    h(
      'p',
      { class: 'muted' },
      v
        ? `version ${v.version} of ${v.of} · ${VERSION_WORDS[v.status] ?? v.status.replace(/_/g, ' ')} · proposed by ${v.proposedBy ?? 'unknown'} ${agoText(Date.now() - Date.parse(v.createdAt))} · ${v.planPath}`
        : 'No plan has been proposed yet.',
      // Complexity only when it changes what the person does (a critical merge waits for them).
      ` · epic ${data.epic.paused ? 'paused' : data.epic.status.replace(/_/g, ' ')}${data.epic.complexity === 'critical' ? ' · critical: its merge waits for your approval' : ''}`,
    ),
  );
  const children: HTMLElement[] = [header];
  const progress = progressLine(data);
  if (progress) children.push(progress);
  if (result) {
    children.push(
      h(
        'section',
        { class: `result ${result.ok ? 'ok' : 'error'}`, role: 'status' },
        h('strong', {}, result.message),
        ...result.lines.map((l) => h('div', {}, l)),
      ),
    );
  }
  const next = nextSection(data);
  if (next) children.push(next);
  if (v) {
    const plan = h('section', { class: 'plan' }, h('h2', {}, v.title || 'Plan'));
    for (const [name, text] of Object.entries(v.sections))
      plan.append(h('h3', {}, name), h('p', { class: 'prose' }, text));
    for (const s of v.steps) {
      const step = h(
        'div',
        { class: s.parent ? 'step substep' : 'step', id: `step-${s.anchor}` },
        h(
          'h3',
          {},
          `Step ${s.number}: ${s.title}`,
          h('span', { class: 'anchor' }, ` #${s.anchor}`),
          s.status ? h('span', { class: `step-status ${s.status}` }, STEP_WORDS[s.status] ?? s.status) : null,
        ),
        s.dependsOn.length
          ? h(
              'div',
              { class: 'deps' },
              `Depends on: ${s.dependsOn
                .map((d) => {
                  const n = v.steps.find((x) => x.anchor === d)?.number;
                  return n ? `Step ${n}` : `#${d}`;
                })
                .join(', ')}`,
            )
          : null,
      );
      for (const kind of ['task', 'test', 'checkpoint']) {
        const items = s.items.filter((i) => i.kind === kind);
        if (items.length === 0) continue;
        step.append(
          h('div', { class: 'kind' }, `${kind[0]?.toUpperCase()}${kind.slice(1)}s`),
          h('ul', {}, ...items.map((i) => h('li', {}, `${i.checked ? '☑' : '☐'} ${i.text}`))),
        );
      }
      plan.append(step);
    }
    const diff = h(
      'section',
      { class: 'diff' },
      h('h2', {}, data.previousVersion ? `Changes since version ${data.previousVersion}` : 'Changes'),
      data.changes.length
        ? h(
            'ul',
            {},
            ...data.changes.map((c) =>
              h(
                'li',
                { class: /added/.test(c) ? 'add' : /removed/.test(c) ? 'del' : 'mod' },
                `${/added/.test(c) ? '+' : /removed/.test(c) ? '−' : '~'} ${c}`,
              ),
            ),
          )
        : h('p', { class: 'muted' }, data.previousVersion ? 'No structural changes.' : 'This is the first version.'),
    );
    if (data.feedbackHistory.length)
      diff.append(
        h('h2', {}, 'Earlier feedback'),
        h('ul', {}, ...data.feedbackHistory.map((f) => h('li', {}, `v${f.version}: ${f.feedback}`))),
      );
    children.push(h('div', { class: 'columns' }, plan, diff));
    if (v.status === 'proposed') {
      // Feedback goes to whoever writes the next version: Lisa, or the person who wrote this one.
      const lisa = data.epic.planner !== 'person';
      const label = lisa ? 'Feedback for Lisa' : 'What the next version should change';
      const feedback = h('textarea', {
        id: 'feedback',
        rows: '4',
        placeholder: lisa
          ? 'What should Lisa change? (required to request changes)'
          : 'Kept with this version for whoever writes the next (required to request changes)',
        'aria-label': label,
      });
      const approve = h('button', { class: 'primary', id: 'approve' }, 'Approve');
      const changes = h('button', { class: 'secondary', id: 'request-changes' }, 'Request changes');
      const discard = h('button', { class: 'secondary', id: 'discard' }, 'Discard');
      approve.addEventListener('click', () => decide('approve'));
      changes.addEventListener('click', () => decide('requestChanges'));
      discard.addEventListener('click', () => decide('discard'));
      for (const b of [approve, changes, discard]) if (busy) b.setAttribute('disabled', 'true');
      children.push(
        h(
          'section',
          { class: 'decision' },
          h('label', { for: 'feedback' }, label),
          feedback,
          h('div', { class: 'buttons' }, approve, changes, discard),
        ),
      );
    }
  }
  const keep = (document.getElementById('feedback') as HTMLTextAreaElement | null)?.value;
  app.replaceChildren(...children);
  const box = document.getElementById('feedback') as HTMLTextAreaElement | null;
  if (box && keep) box.value = keep;
}
