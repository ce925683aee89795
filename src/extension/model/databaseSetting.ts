import { isDatabaseUrl } from '../../core/index.ts';
import { type Inspected, userValue } from './userValue.ts';

/** Where this window's store is, as the environment and the user's settings say (docs/postgres.md, "Choosing the backend"). */
export interface EditorDatabase {
  /** The PostgreSQL URL, or undefined for the repository's SQLite file. Never shown: it may hold a password. */
  readonly url: string | undefined;
  /** Workspace levels whose value was ignored (a workspace cannot point the editor at another server). */
  readonly ignored: readonly ('workspace' | 'workspace folder')[];
  /** Why the setting cannot be used (the window then shows this instead of any state). */
  readonly problem: string | undefined;
}

/**
 * `SPRINGFIELD_DATABASE_URL` in the editor's environment, else the user's `springfield.databaseUrl`,
 * else the SQLite file; the CLI takes the same order after its `--db`.
 */
export function editorDatabase(env: NodeJS.ProcessEnv, inspected: Inspected<string> | undefined): EditorDatabase {
  const { value, ignored } = userValue(inspected, '');
  if (isDatabaseUrl(env.SPRINGFIELD_DATABASE_URL))
    return { url: env.SPRINGFIELD_DATABASE_URL, ignored, problem: undefined };
  const given = typeof value === 'string' ? value.trim() : '';
  if (given === '') return { url: undefined, ignored, problem: undefined };
  if (!isDatabaseUrl(given)) {
    return {
      url: undefined,
      ignored,
      problem:
        'springfield.databaseUrl (user settings) is not a postgres:// or postgresql:// URL; fix it or clear it to use .springfield/state.db',
    };
  }
  return { url: given, ignored, problem: undefined };
}

/**
 * The environment of a process the editor starts for an agent: the editor's own without its
 * variables (`isEditor`), then the launch's, run by the editor's runtime, `springfield` first on PATH,
 * and the editor's database so the agent and its CLI write where the editor reads (never on a command line).
 */
export function agentEnvironment(
  base: NodeJS.ProcessEnv,
  isEditor: (name: string) => boolean,
  launch: Readonly<Record<string, string>>,
  binDir: string | undefined,
  databaseUrl: string | undefined,
  delimiter: string,
  cwd?: string,
): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(base)) if (v !== undefined && !isEditor(k)) env[k] = v;
  Object.assign(env, launch, { ELECTRON_RUN_AS_NODE: '1' });
  if (cwd) env.PWD = cwd;
  if (databaseUrl) env.SPRINGFIELD_DATABASE_URL = databaseUrl;
  if (binDir) env.PATH = env.PATH ? `${binDir}${delimiter}${env.PATH}` : binDir;
  return env;
}
