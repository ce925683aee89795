import * as vscode from 'vscode';
import { userValue } from './model/userValue.ts';

const warned = new Set<string>();

/**
 * A Springfield setting only the user may set (USER_ONLY_SETTINGS): read from user settings alone,
 * whatever the workspace says; a workspace value is ignored with a warning, once per setting.
 */
export function userSetting<T>(key: string, fallback: T): T {
  const { value, ignored } = userValue(vscode.workspace.getConfiguration('springfield').inspect<T>(key), fallback);
  if (ignored.length > 0 && !warned.has(key)) {
    warned.add(key);
    void vscode.window.showWarningMessage(`Springfield ignores springfield.${key} from the ${ignored.join(' and ')} settings: what runs, and whether the scheduler starts by itself, comes only from your user settings.`);
  }
  return value;
}
