/** The "Needs you (N)" row at the top of the Epics view and its items; no vscode here. */
import type { NeedsYou, NeedsYouItem } from '../model/needsYou.ts';
import type { TreeNode } from './nodes.ts';
import { leaseLeft, md, type Live } from './viewText.ts';

/** The command a Needs you row runs when clicked: it finds the item by the row's key. */
export const NEEDS_YOU_COMMAND = 'springfield.needsYou.act';

/** Nothing when nothing waits; else the Needs you row (expanded), or the scheduler's idle line alone. */
export function needsYouRoot(needs: NeedsYou, now: Date): TreeNode[] {
  const idle = needs.idle ? idleNode(needs.idle) : undefined;
  if (needs.items.length === 0) return idle ? [idle] : [];
  const children = [...needs.items.map((i) => itemNode(i, now)), ...(idle ? [idle] : [])];
  return [
    {
      id: 'needs',
      kind: 'needs',
      label: `Needs you (${needs.items.length})`,
      icon: { id: 'bell-dot', color: 'charts.yellow' },
      contextValue: 'needs',
      collapsible: 'expanded',
      ref: {},
      tooltip: () => needs.items.map((i) => `- ${md(i.text)}`).join('\n'),
      children: () => children,
    },
  ];
}

function itemNode(item: NeedsYouItem, now: Date): TreeNode {
  const lease = item.expiresAt;
  const describe = lease
    ? (now: Date): Live => {
        const left = leaseLeft(lease, now);
        return { text: `${item.subject} · ${left.text}`, nextMs: left.nextMs };
      }
    : undefined;
  // What to do leads the row; what it is about (and why, when the words do not say it) follows.
  return {
    id: `needs:${item.key}`,
    kind: 'needs',
    label: item.label,
    description: describe ? describe(now).text : [item.subject, item.detail].filter(Boolean).join(' · '),
    live: describe,
    icon: { id: item.icon, color: 'charts.yellow' },
    contextValue: `needs:${item.action.kind}`,
    collapsible: 'none',
    command: { command: NEEDS_YOU_COMMAND, title: item.label },
    ref: { needsKey: item.key, epicId: item.epicId ?? undefined },
    tooltip: () => `${md(item.text)}\n\nClick: **${md(item.label)}**`,
  };
}

function idleNode(text: string): TreeNode {
  return {
    id: 'needs:idle',
    kind: 'note',
    label: text,
    icon: { id: 'watch' },
    contextValue: 'note',
    collapsible: 'none',
    ref: {},
    tooltip: () => md(text),
  };
}
