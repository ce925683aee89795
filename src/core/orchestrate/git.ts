import { simpleGit, type SimpleGit } from 'simple-git';

const PASSED = /^(PATH|HOME|USER|LOGNAME|LANG|LANGUAGE|LC_[A-Z_]+|TZ|TMPDIR|TEMP|TMP|SHELL|SYSTEMROOT|COMSPEC|PATHEXT|XDG_CONFIG_HOME|GIT_(AUTHOR|COMMITTER)_(NAME|EMAIL|DATE))$/;

/**
 * simple-git for the scheduler's own git work, with a small allow-listed environment: no editor,
 * pager, askpass, ssh command, config override or GIT_DIR from whoever started us (simple-git refuses
 * several of them outright, and none of them belong in unattended git calls).
 */
export function schedulerGit(baseDir: string): SimpleGit {
  const env: Record<string, string> = { GIT_TERMINAL_PROMPT: '0' };
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && PASSED.test(k)) env[k] = v;
  return simpleGit({ baseDir, trimmed: true }).env(env);
}
