import { unknownItem, unknownItemId } from './refusals.ts';
import type { ItemCounts, ItemSelector } from '../types.ts';

/** A checklist item row as both backends read it for an update. */
export interface ItemRow {
  id: number;
  step_anchor: string;
  kind: 'task' | 'test' | 'checkpoint';
  ordinal: number;
  text: string;
  status: 'open' | 'in_progress' | 'completed';
}

/** The items a selector names (every item, one by id, or a kind's ordinal or all of that kind); an unknown one is bad input. */
export function selectItems(items: ItemRow[], s: ItemSelector, anchor: string): ItemRow[] {
  if ('all' in s) return items;
  if ('id' in s) {
    const found = items.filter((i) => i.id === s.id);
    if (found.length === 0) throw unknownItemId(anchor, s.id);
    return found;
  }
  const ofKind = items.filter((i) => i.kind === s.kind);
  if (s.ordinal === 'all') return ofKind;
  const found = ofKind.filter((i) => i.ordinal === s.ordinal);
  if (found.length === 0) throw unknownItem(anchor, s.kind, s.ordinal, ofKind.length);
  return found;
}

/** Open, in-progress and completed counts per kind: what an update returns. */
export function countByKind(items: readonly ItemRow[]): {
  tasks: ItemCounts;
  tests: ItemCounts;
  checkpoints: ItemCounts;
} {
  const blank = (): ItemCounts => ({ open: 0, in_progress: 0, completed: 0 });
  const out = { tasks: blank(), tests: blank(), checkpoints: blank() };
  for (const i of items) (i.kind === 'task' ? out.tasks : i.kind === 'test' ? out.tests : out.checkpoints)[i.status]++;
  return out;
}
