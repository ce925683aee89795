import { dirname, isAbsolute, relative, sep } from 'node:path';
import { shellQuote } from '../shellQuote.ts';
import {
  Checklist,
  commandFinding,
  diagnoseRemoteStore,
  diagnoseStore,
  redactDatabaseUrl,
  type DoctorInput,
  type DoctorReport,
} from '../store/index.ts';
import { trackedUnder } from '../trust/trust.ts';

/** Diagnoses the store and its links to git and PLAN.md, read-only; never modifies the database. */
export function diagnose(input: DoctorInput & { readonly env: NodeJS.ProcessEnv }): DoctorReport {
  const list = new Checklist();
  diagnoseStore(input, list);
  trackedCheck(input, list);
  return list.report(input.dbPath);
}

/** Diagnoses a PostgreSQL store: which server and how, the repository's id, the schema; never prints a password. */
export async function diagnoseRemote(input: Parameters<typeof diagnoseRemoteStore>[0]): Promise<DoctorReport> {
  const list = new Checklist();
  await diagnoseRemoteStore(input, list);
  return list.report(redactDatabaseUrl(input.url));
}

/** Springfield's folder must stay out of git: a tracked state.db reaches everyone who clones (the scheduler refuses it). */
function trackedCheck(input: DoctorInput & { readonly env: NodeJS.ProcessEnv }, list: Checklist): void {
  const dir = dirname(input.dbPath);
  const rel = input.mainRoot ? relative(input.mainRoot, dir).split(sep).join('/') : '';
  if (!input.mainRoot || rel === '' || rel.startsWith('..') || isAbsolute(rel))
    return list.skip('tracked', 'the database is outside the main worktree');
  const files = trackedUnder(input.mainRoot, dir, input.env);
  const db = relative(input.mainRoot, input.dbPath).split(sep).join('/');
  const line = `${rel}/`;
  const fix = `git rm -r -q --cached -- ${shellQuote(rel)} && { grep -qxF ${shellQuote(line)} .gitignore 2>/dev/null || echo ${shellQuote(line)} >> .gitignore; }`;
  const message = `tracked by git: ${files.join(', ')} (Springfield's state must stay out of the repository; the scheduler refuses a tracked state.db)`;
  const found =
    files.length === 0
      ? []
      : [
          commandFinding(
            files.includes(db) ? 'error' : 'warning',
            'springfield_tracked',
            message,
            fix,
            'then commit; the files stay on disk, untracked',
          ),
        ];
  list.check('tracked', found, `${line} is not tracked`, `${files.length} tracked`);
}
