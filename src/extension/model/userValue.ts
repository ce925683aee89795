/**
 * Settings that name a command, a path to run in, a database server, or switch the scheduler on: only
 * the user may set them (package.json gives them `machine` scope), never a workspace, because a
 * repository's own `.vscode/settings.json` would then decide what runs or where claims go (docs/trust.md).
 */
export const USER_ONLY_SETTINGS: readonly string[] = [
  'roles',
  'verification.commands',
  'worktrees.location',
  'worktrees.setup',
  'worktrees.archive',
  'worktrees.addToSourceControl',
  'autoOrchestrate',
  'databaseUrl',
];

/** The parts of `WorkspaceConfiguration.inspect()` a value can come from. */
export interface Inspected<T> {
  readonly defaultValue?: T;
  readonly globalValue?: T;
  readonly workspaceValue?: T;
  readonly workspaceFolderValue?: T;
  readonly defaultLanguageValue?: T;
  readonly globalLanguageValue?: T;
  readonly workspaceLanguageValue?: T;
  readonly workspaceFolderLanguageValue?: T;
}

/** The user's own value (user settings, else the default, else `fallback`), and which workspace levels set one that was ignored. */
export function userValue<T>(
  inspected: Inspected<T> | undefined,
  fallback: T,
): { value: T; ignored: ('workspace' | 'workspace folder')[] } {
  const ignored: ('workspace' | 'workspace folder')[] = [];
  if (inspected?.workspaceValue !== undefined || inspected?.workspaceLanguageValue !== undefined)
    ignored.push('workspace');
  if (inspected?.workspaceFolderValue !== undefined || inspected?.workspaceFolderLanguageValue !== undefined)
    ignored.push('workspace folder');
  return { value: inspected?.globalValue ?? inspected?.defaultValue ?? fallback, ignored };
}
