import { type ContextView, folderName } from '../../core/index.ts';

/** The context as markdown an agent can read top to bottom. */
export function renderContext(c: ContextView): string {
  const out: string[] = ['# Springfield context'];
  if (c.epic) {
    out.push(
      '',
      `## Epic ${c.epic.id}: ${c.epic.title}`,
      `Status: ${c.epic.status}${c.epic.status_reason ? ` (${c.epic.status_reason})` : ''} · complexity ${c.epic.complexity} · build iteration ${c.epic.iteration}/${c.epic.build_budget} · plan iteration ${c.epic.plan_iteration}/${c.epic.plan_budget}${c.epic.next_role ? ` · next role: ${c.epic.next_role}` : ''}`,
    );
  }
  if (c.intent) out.push('', '## Intent', c.intent);
  if (c.approach) out.push('', '## Approach', c.approach);
  if (c.constraints) out.push('', '## Constraints', c.constraints);
  if (c.feedback.length)
    out.push('', '## Feedback on earlier plan versions', ...c.feedback.map((f) => `- v${f.version}: ${f.feedback}`));
  if (c.previous_proposal) {
    const p = c.previous_proposal;
    out.push(
      '',
      `## Your previous proposal (v${p.version}, ${p.plan_path}): a person asked for changes`,
      ...(p.feedback ? [`Feedback: ${p.feedback}`] : []),
      '````markdown',
      p.body.trimEnd(),
      '````',
    );
  }
  if (c.research.length)
    out.push('', '## What you researched before', ...c.research.map((n) => `- ${n.kind}: ${n.summary}`));
  if (c.plan)
    out.push(
      '',
      `## Plan ${c.plan.plan_path} [${c.plan.status}] — ${c.plan.steps_completed}/${c.plan.steps_total} steps completed`,
    );
  if (c.step) {
    const s = c.step;
    out.push('', `## Step ${s.anchor}: ${s.title} [${s.status}]`);
    if (s.claimed_by)
      out.push(
        `Held by ${s.held_by_you ? 'you' : s.claimed_by}${s.agent ? ` (${s.agent})` : ''} · claim token ${s.claim_token}${s.lease_expires_at ? ` · lease until ${s.lease_expires_at}` : ''}`,
      );
    if (s.depends_on.length)
      out.push(
        `Depends on: ${s.depends_on.join(', ')}${s.blocked_by.length ? ` — still waiting on ${s.blocked_by.join(', ')}` : ' (all completed)'}`,
      );
    for (const i of s.items)
      out.push(
        `- [${i.status === 'completed' ? 'x' : ' '}] ${i.kind} ${i.ordinal}: ${i.text}${i.status === 'in_progress' ? ' (in progress)' : ''}`,
      );
    for (const sub of s.substeps) {
      out.push(`### ${sub.anchor}: ${sub.title} [${sub.status}]`);
      for (const i of sub.items)
        out.push(`- [${i.status === 'completed' ? 'x' : ' '}] ${i.kind} ${i.ordinal}: ${i.text}`);
    }
  }
  if (c.signals.length) {
    out.push('', '## Review signals');
    for (const s of c.signals) {
      out.push(
        `- ${s.type}${s.created_by ? ` (by ${folderName(s.created_by)})` : ''}: ${s.summary}${s.status === 'awaiting_person' ? ' (awaiting a person)' : s.resolution ? ` (${s.resolution})` : ''}`,
      );
      for (const l of s.locations)
        out.push(`  - ${l.file}:${l.line}${l.end_line ? `-${l.end_line}` : ''}${l.note ? ` — ${l.note}` : ''}`);
    }
  }
  if (c.previous_run) {
    const r = c.previous_run;
    out.push(
      '',
      `## Your previous session (run ${r.id}) did not succeed`,
      `${r.role}${r.step_anchor ? ` on ${r.step_anchor}` : ''}: ${r.status}${r.exit_code !== null ? `, exit ${r.exit_code}` : ''}${r.outcome_reason ? ` — ${r.outcome_reason}` : ''}`,
    );
    if (r.output_tail.trim())
      out.push('Last lines of its output:', '```', r.output_tail.trimEnd().split('\n').slice(-20).join('\n'), '```');
  }
  if (c.verification_failures.length) {
    out.push('', '## Last verification failures');
    for (const v of c.verification_failures)
      out.push(
        `- \`${v.command}\` exited ${v.exit_code ?? '?'} at ${v.created_at}`,
        '```',
        v.output_tail.trimEnd(),
        '```',
      );
  }
  if (c.decisions.length)
    out.push('', '## Recent decisions', ...c.decisions.map((d) => `- ${d.at} ${d.kind}: ${d.summary}`));
  if (c.must_read.length)
    out.push('', '## Must read (open these yourself)', ...c.must_read.map((d) => `- ${d.path} — ${d.why}`));
  out.push('', '## Next commands', ...c.next_commands.map((cmd) => `    ${cmd}`));
  return out.join('\n');
}
