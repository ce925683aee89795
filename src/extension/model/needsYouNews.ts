/**
 * Which Needs you items are new since the person was last told (docs/extension.md, "Needs you"):
 * each item is told once while it stands. Blocks and pauses are BlockNotifier's (with their own
 * buttons), and leases count down in the list instead. Pure: no vscode.
 */
import type { NeedsYouItem } from './needsYou.ts';

const OWN_NOTICE = /^(blocked|paused|lease):/;

/** The items to tell now, and the keys to remember (only items that still stand, so the list never grows). */
export function needsYouNews(
  told: readonly string[],
  items: readonly NeedsYouItem[],
): { fresh: NeedsYouItem[]; keep: string[] } {
  const known = new Set(told);
  const tellable = items.filter((i) => !OWN_NOTICE.test(i.key));
  return { fresh: tellable.filter((i) => !known.has(i.key)), keep: tellable.map((i) => i.key) };
}
