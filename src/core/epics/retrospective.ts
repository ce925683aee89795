/**
 * Lovejoy's retrospective, mechanically (docs/lifecycle.md): what an epic cost and where it stumbled,
 * read from the store when it is merged — no agent session (the store reads and records it; this
 * file renders it). It goes into the epic's summary, into
 * PLAN.md beside the epic's id, and into the event log.
 */

export interface Retrospective {
  readonly epic_id: string;
  readonly sessions: Readonly<Record<string, number>>;
  readonly failed_runs: readonly {
    id: number;
    role: string;
    step_anchor: string | null;
    outcome: string;
    reason: string | null;
  }[];
  readonly verification_failures: readonly {
    command: string;
    exit_code: number | null;
    step_anchor: string | null;
    at: string;
  }[];
  readonly plan_versions: number;
  readonly build_iterations: number;
  readonly approved_at: string | null;
  readonly merged_at: string;
  /** From the first plan approval to the merge, in whole minutes (null without an approval). */
  readonly approval_to_merge_minutes: number | null;
}

function duration(minutes: number | null): string {
  if (minutes === null) return 'no approval recorded';
  return minutes < 60 ? `${minutes} min` : `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}

/** The retrospective as markdown lines (a `## Retrospective` section). */
export function renderRetrospective(r: Retrospective): string[] {
  const total = Object.values(r.sessions).reduce((a, b) => a + b, 0);
  return [
    '## Retrospective',
    '',
    `- Sessions by role: ${
      Object.entries(r.sessions)
        .map(([role, n]) => `${role} ${n}`)
        .join(', ') || 'none'
    } (total ${total})`,
    `- Plan versions: ${r.plan_versions} · build iterations: ${r.build_iterations}`,
    `- Failed runs: ${r.failed_runs.length === 0 ? 'none' : r.failed_runs.length}`,
    ...r.failed_runs.map(
      (f) =>
        `  - run #${f.id} ${f.role}${f.step_anchor ? ` on ${f.step_anchor}` : ''}: ${f.outcome}${f.reason ? ` — ${f.reason}` : ''}`,
    ),
    `- Verification failures: ${r.verification_failures.length === 0 ? 'none' : r.verification_failures.length}`,
    ...r.verification_failures.map(
      (v) =>
        `  - \`${v.command}\` exited ${v.exit_code ?? '?'}${v.step_anchor ? ` after ${v.step_anchor}` : ''} at ${v.at}`,
    ),
    `- Approval to merge: ${duration(r.approval_to_merge_minutes)}${r.approved_at ? ` (approved ${r.approved_at}, merged ${r.merged_at})` : ''}`,
    '',
  ];
}

/**
 * PLAN.md with the retrospective under the epic's id line (`**springfield:** \`sf-…\``), replacing an
 * earlier one for the same epic; null when PLAN.md does not name the epic.
 */
export function planMdWithRetrospective(text: string, epicId: string, r: Retrospective): string | null {
  const lines = text.split('\n');
  const at = lines.findIndex((l) => l.includes(`**springfield:** \`${epicId}\``));
  if (at < 0) return null;
  const marker = `**Retrospective (${epicId}):**`;
  let end = at + 1;
  if (lines[end]?.startsWith(marker)) end += 1;
  const total = Object.values(r.sessions).reduce((a, b) => a + b, 0);
  const line = `${marker} merged ${r.merged_at.slice(0, 10)}; sessions ${Object.entries(r.sessions)
    .map(([role, n]) => `${role} ${n}`)
    .join(
      ', ',
    )} (total ${total}); failed runs ${r.failed_runs.length}; verification failures ${r.verification_failures.length}; approval to merge ${duration(r.approval_to_merge_minutes)}.`;
  return [...lines.slice(0, at + 1), line, ...lines.slice(end)].join('\n');
}
