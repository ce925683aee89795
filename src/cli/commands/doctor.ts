import { statSync } from 'node:fs';
import {
  type CheckResult,
  diagnose,
  diagnoseRemote,
  hostId,
  isDatabaseUrl,
  listWorktrees,
  repositoryId,
} from '../../core/index.ts';
import { flag } from '../args.ts';
import type { Command } from '../command.ts';
import { output } from '../output.ts';

const MARK: Record<CheckResult['status'], string> = { ok: 'ok', warning: 'warn', error: 'error', skipped: 'skip' };

export const doctorCommand: Command = {
  name: 'doctor',
  summary: 'check the state database and its links to git worktrees and PLAN.md; print the fixes',
  positionals: [],
  options: [
    {
      name: 'full',
      type: 'boolean',
      description:
        "SQLite: check every page, the whole event log included (reads the whole file: seconds on a million events); else the log's ends only",
    },
  ],
  details: [
    'Read-only. Exit 0 when there are no errors (warnings allowed), 1 when there are errors.',
    "Its cost follows the state it reports (plans, steps, claims, epics), not the length of the history: the event log's integrity is checked at its ends unless --full.",
    'Each finding says how to fix it; with --json, `command` is the shell command that does (run in the main worktree), or null when the fix is not one.',
  ].join('\n'),
  async run(ctx) {
    const location = ctx.location;
    const worktrees = listWorktrees(location.worktreeRoot ?? location.commonDir, ctx.env);
    const url = ctx.dbPath;
    const full = flag(ctx.args, 'full');
    const size = isDatabaseUrl(url) ? undefined : statSync(url, { throwIfNoEntry: false })?.size;
    // Say what takes the time while it does (the result is printed only at the end).
    if (full && size !== undefined) ctx.progress(`checking every page of ${url} (${Math.ceil(size / 1048576)} MB)…`);
    const report = isDatabaseUrl(url)
      ? await diagnoseRemote({
          url,
          repository: repositoryId(location.commonDir, location.worktreeRoot ?? ctx.cwd, ctx.env),
          host: hostId(ctx.env),
          env: ctx.env,
        })
      : diagnose({ dbPath: url, mainRoot: location.mainRoot, worktrees, now: new Date(), env: ctx.env, full });
    const width = Math.max(...report.checks.map((c) => c.name.length)) + 2;
    const lines = report.checks.map((c) => `${MARK[c.status].padEnd(6)}${c.name.padEnd(width)}${c.detail}`);
    if (report.findings.length > 0) {
      lines.push('', 'Findings:');
      for (const f of report.findings)
        lines.push(`  ${f.severity === 'error' ? 'error' : 'warn '} ${f.code}: ${f.message}`);
      const fixes = [...new Set(report.findings.map((f) => f.fix))];
      lines.push('', 'Fixes:', ...fixes.map((f) => `  ${f}`));
    }
    lines.push(
      '',
      report.ok
        ? `No errors${report.warnings ? ` (${report.warnings} warning${report.warnings === 1 ? '' : 's'})` : ''}.`
        : `${report.errors} error${report.errors === 1 ? '' : 's'}, ${report.warnings} warning${report.warnings === 1 ? '' : 's'}.`,
    );
    return output(report, lines.join('\n'), report.ok ? 0 : 1);
  },
};
