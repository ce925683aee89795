import type { DashboardData, TimelineEntry } from '../../src/protocol/messages.ts';
import { agoText } from '../../src/shared/format.ts';
import { AGENT_ROLES, ROLE_NAMES } from '../../src/shared/roles.ts';
import { h } from '../common/vscodeApi.ts';

/** What the timeline shows: every value '' means "all". */
export interface Filters {
  readonly epic: string;
  readonly role: string;
  readonly kind: string;
}

const ROLES: readonly (readonly [string, string])[] = [
  ['person', 'People'],
  ...AGENT_ROLES.map((r) => [r, ROLE_NAMES[r]] as const),
  ['agent', 'Other agents'],
];
const KINDS: readonly (readonly [string, string])[] = [
  ['epic', 'Epics'],
  ['plan', 'Plans and approvals'],
  ['step', 'Steps and checklists'],
  ['signal', 'Review signals'],
  ['run', 'Agent runs'],
];

function choose(
  label: string,
  value: string,
  all: string,
  options: readonly (readonly [string, string])[],
  onChange: (v: string) => void,
): HTMLElement {
  const select = h(
    'select',
    { 'aria-label': label },
    h('option', { value: '' }, all),
    ...options.map(([v, text]) => {
      const o = h('option', { value: v }, text);
      if (v === value) o.setAttribute('selected', 'true');
      return o;
    }),
  );
  select.addEventListener('change', () => onChange((select as HTMLSelectElement).value));
  return h('label', { class: 'filter' }, h('span', { class: 'muted' }, label), select);
}

function matches(e: TimelineEntry, f: Filters): boolean {
  return (!f.epic || e.epicId === f.epic) && (!f.role || e.role === f.role) && (!f.kind || e.kind === f.kind);
}

/** Entries shown before "Show more": the page scrolls, the timeline does not scroll inside it. */
const FIRST = 25;

/**
 * The event timeline, newest first, with filters by epic, by who (role) and by kind; the first
 * `shown` entries, and a button for more.
 */
export function timelineSection(
  d: DashboardData,
  f: Filters,
  onChange: (f: Filters) => void,
  now: () => number,
  more: { shown: number; onMore: () => void },
): HTMLElement {
  const epics = d.epics.map((e) => [e.id, `${e.title} (${e.id})`] as const);
  const matching = d.events.filter((e) => matches(e, f));
  const shown = matching.slice(0, Math.max(FIRST, more.shown));
  const filters = h(
    'div',
    { class: 'filters' },
    choose('Epic', f.epic, 'All epics', epics, (epic) => onChange({ ...f, epic })),
    choose('Who', f.role, 'Everyone', ROLES, (role) => onChange({ ...f, role })),
    choose('What', f.kind, 'Everything', KINDS, (kind) => onChange({ ...f, kind })),
  );
  const list =
    shown.length === 0
      ? h('p', { class: 'muted' }, d.events.length ? 'Nothing matches these filters.' : 'Nothing has happened yet.')
      : h(
          'ol',
          { class: 'events' },
          ...shown.map((e) =>
            h(
              'li',
              {},
              h(
                'span',
                { class: 'when muted', 'data-ago': e.at, title: new Date(e.at).toLocaleString() },
                agoText(now() - Date.parse(e.at)),
              ),
              h(
                'span',
                { class: 'what' },
                h('strong', {}, e.who),
                ` ${e.text}`,
                e.reason ? h('span', { class: 'muted' }, ` — ${e.reason}`) : null,
                e.lines?.length ? h('ul', { class: 'lines' }, ...e.lines.map((l) => h('li', {}, l))) : null,
              ),
              e.epicId ? h('span', { class: 'epic-tag', title: e.epicId }, d.epicTitles[e.epicId] ?? e.epicId) : null,
            ),
          ),
        );
  const rest = matching.length - shown.length;
  const button = h('button', { class: 'secondary small more' }, `Show ${Math.min(rest, 50)} more`);
  button.addEventListener('click', more.onMore);
  return h(
    'section',
    { class: 'panel timeline' },
    h('div', { class: 'panel-head' }, h('h2', {}, 'Timeline'), filters),
    list,
    rest > 0 ? button : null,
  );
}
