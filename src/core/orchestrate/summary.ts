import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { EpicReport, UsageByRole, VerificationView } from '../store/index.ts';

export function summaryFileName(epicId: string): string {
  return `SUMMARY-${epicId}.md`;
}

/**
 * Mechanical completion's record (pipeline-simplification ADR): steps with their commits,
 * verification evidence, artifacts, signals and sessions spent — assembled, not written by an agent.
 */
export function renderSummary(report: EpicReport): string {
  const { epic, plan, runs, verifications, artifacts, signals } = report;
  const sessions = new Map<string, number>();
  for (const r of runs) sessions.set(r.role, (sessions.get(r.role) ?? 0) + 1);
  const lines = [
    verdictLine(verifications),
    '',
    `# ${summaryFileName(epic.id)} — ${epic.title}`,
    '',
    `Epic \`${epic.id}\` · complexity ${epic.complexity} · build iterations ${epic.iteration} · generated ${report.read_at}`,
    '',
    '## Steps',
    '',
    ...(plan?.steps ?? [])
      .flatMap((s) => [s, ...s.substeps])
      .map(
        (s) =>
          `- ${s.status === 'completed' ? '[x]' : '[ ]'} ${s.anchor} ${s.title}${s.commit_hash ? ` — \`${s.commit_hash.slice(0, 12)}\`` : ''}${s.complete_reason ? ` (forced: ${s.complete_reason})` : ''}`,
      ),
    '',
    '## Verification evidence',
    '',
    ...(verifications.length
      ? verifications.map(
          (v) =>
            `- ${v.verdict === 'pass' ? 'PASS' : 'FAIL'} \`${v.command}\`${v.step_anchor ? ` after ${v.step_anchor}` : ''}${v.run_id ? ` (run #${v.run_id})` : ''} (exit ${v.exit_code ?? '?'}, ${(v.duration_ms / 1000).toFixed(1)} s, ${v.created_at})`,
        )
      : ['- none configured']),
    '',
    '## Artifacts',
    '',
    ...(artifacts.length ? artifacts.map((a) => `- ${a.step_anchor} ${a.kind}: ${a.summary}`) : ['- none']),
    '',
    '## Signals',
    '',
    ...signals.map((s) => `- ${s.type}: ${s.summary}${s.resolution ? ` (${s.resolution})` : ''}`),
    '',
    '## Sessions spent',
    '',
    ...[...sessions].map(([role, n]) => `- ${role}: ${n}`),
    `- total: ${runs.length} (ceremony: 0)`,
    '',
    ...costLines(report.usage),
  ];
  return lines.join('\n');
}

/** Tokens and cost by role, when the agents reported them. */
function costLines(usage: readonly UsageByRole[]): string[] {
  if (usage.length === 0) return [];
  const cost = usage.reduce((a, u) => a + (u.cost_usd ?? 0), 0);
  return [
    '## Cost',
    '',
    ...usage.map(
      (u) =>
        `- ${u.role}: ${u.cost_usd !== null ? `$${u.cost_usd.toFixed(4)}` : 'no cost reported'}, ${u.input_tokens ?? 0} in / ${u.output_tokens ?? 0} out tokens (${u.runs} run${u.runs === 1 ? '' : 's'})`,
    ),
    `- total: $${cost.toFixed(4)}`,
    '',
  ];
}

/** The summary's first line: the newest verification pass's verdict, which command decided it, and when. */
export function verdictLine(verifications: readonly VerificationView[]): string {
  const newest = verifications[0];
  if (!newest) return '**Verdict: no verification configured** — nothing was run to check the build';
  // One pass = the rows sharing the newest run id (or timestamp); it fails on its failing command.
  const pass = verifications.filter(
    (v) =>
      (newest.run_id !== null ? v.run_id === newest.run_id : v.created_at === newest.created_at) &&
      v.created_at === newest.created_at,
  );
  const failed = pass.find((v) => v.verdict !== 'pass');
  return failed
    ? `**Verdict: failed** — \`${failed.command}\` exited ${failed.exit_code ?? '?'}${failed.step_anchor ? ` after ${failed.step_anchor}` : ''} at ${failed.created_at}`
    : `**Verdict: passed** — ${pass.map((v) => `\`${v.command}\``).join(', ')}${newest.step_anchor ? ` after ${newest.step_anchor}` : ''} at ${newest.created_at}`;
}

/** Writes SUMMARY-<epic>.md into the epic's worktree; returns its path. */
export function writeSummary(report: EpicReport, worktree: string): string {
  const path = join(worktree, summaryFileName(report.epic.id));
  writeFileSync(path, renderSummary(report));
  return path;
}
