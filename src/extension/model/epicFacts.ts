/** Short facts about an epic, as its tree row and the Needs you list say them. No vscode here. */
import type { EpicRow } from '../../core/index.ts';

/** The one fact of a blocked epic: "Ralph failed 3 times in a row", "plan drift", "iteration budget exhausted". */
export function blockedFact(e: Pick<EpicRow, 'status_reason'>): string {
  const reason = e.status_reason ?? '';
  const failed = /^agent_failed: (.+? failed \d+ times in a row)/.exec(reason)?.[1];
  if (failed) return failed;
  return reason.split(':')[0]?.replace(/_/g, ' ') ?? '';
}
