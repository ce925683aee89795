import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { EnvironmentError, UsageError } from '../errors.ts';
import { gitOut } from './exec.ts';

/** What scopes a repository's rows on a shared server: its root commit's hash, or a configured name (docs/postgres-design.md, "Who and what: repository, holder, plan"). */
export interface RepositoryId {
  readonly id: string;
  readonly source: 'root_commit' | 'configured';
}

/**
 * The repository id: `SPRINGFIELD_REPO_ID`, else the cached one in `<git common dir>/springfield/repository`,
 * else the root commit of HEAD's first-parent history (cached, created exclusively). A shallow clone or
 * a repository without commits has no usable root commit: refused with the fix.
 */
export function repositoryId(commonDir: string, cwd: string, env: NodeJS.ProcessEnv): RepositoryId {
  const configured = env.SPRINGFIELD_REPO_ID;
  if (configured !== undefined && configured !== '') {
    if (!/^[\x21-\x7e]{1,200}$/.test(configured))
      throw new UsageError(
        'bad_repository_id',
        'SPRINGFIELD_REPO_ID must be 1–200 printable characters without spaces',
      );
    return { id: configured, source: 'configured' };
  }
  const cache = join(commonDir, 'springfield', 'repository');
  try {
    const [id, source] = readFileSync(cache, 'utf8').trim().split(/\s+/);
    if (id && /^[0-9a-f]{40,64}$/.test(id) && source === 'root_commit') return { id, source };
  } catch {
    // not cached yet
  }
  if (gitOut(cwd, ['rev-parse', '--is-shallow-repository'], env) === 'true') {
    throw new EnvironmentError(
      'no_repository_id',
      'a shallow clone has no usable root commit to identify the repository on a shared server: set SPRINGFIELD_REPO_ID to a name every clone uses',
    );
  }
  let roots: string;
  try {
    roots = gitOut(cwd, ['rev-list', '--first-parent', '--max-parents=0', 'HEAD'], env);
  } catch {
    throw new EnvironmentError(
      'no_repository_id',
      'the repository has no commit to identify it on a shared server: commit once, or set SPRINGFIELD_REPO_ID to a name every clone uses',
    );
  }
  const id = roots.split('\n')[0]?.trim() ?? '';
  if (!/^[0-9a-f]{40,64}$/.test(id))
    throw new EnvironmentError(
      'no_repository_id',
      "cannot find the repository's root commit: set SPRINGFIELD_REPO_ID to a name every clone uses",
    );
  try {
    mkdirSync(join(commonDir, 'springfield'), { recursive: true });
    writeFileSync(cache, `${id} root_commit\n`, { flag: 'wx', mode: 0o644 });
  } catch {
    // another process cached it first, or the git dir is read-only: computed again next time
  }
  return { id, source: 'root_commit' };
}

/** This machine's part of a holder: `SPRINGFIELD_HOST`, else the hostname; 1–255 printable characters. */
export function hostId(env: NodeJS.ProcessEnv): string {
  const host = env.SPRINGFIELD_HOST !== undefined && env.SPRINGFIELD_HOST !== '' ? env.SPRINGFIELD_HOST : hostname();
  if (!/^[\x20-\x7e]{1,255}$/.test(host))
    throw new UsageError('bad_host', 'SPRINGFIELD_HOST must be 1–255 printable characters');
  return host;
}
