import * as vscode from 'vscode';
import { editorDatabase, type EditorDatabase } from './model/databaseSetting.ts';
import { userValue } from './model/userValue.ts';

const warned = new Set<string>();

/**
 * A Springfield setting only the user may set (USER_ONLY_SETTINGS): read from user settings alone,
 * whatever the workspace says; a workspace value is ignored with a warning, once per setting.
 */
export function userSetting<T>(key: string, fallback: T): T {
  const { value, ignored } = userValue(vscode.workspace.getConfiguration('springfield').inspect<T>(key), fallback);
  warnIgnored(
    key,
    ignored,
    'what runs, and whether the scheduler starts by itself, comes only from your user settings',
  );
  return value;
}

/** This window's database: SPRINGFIELD_DATABASE_URL, else the user's springfield.databaseUrl (a workspace's is ignored, with a warning). */
export function databaseSetting(): EditorDatabase {
  const db = editorDatabase(
    process.env,
    vscode.workspace.getConfiguration('springfield').inspect<string>('databaseUrl'),
  );
  warnIgnored('databaseUrl', db.ignored, 'which database server this editor uses comes only from your user settings');
  return db;
}

function warnIgnored(key: string, ignored: readonly string[], why: string): void {
  if (ignored.length === 0 || warned.has(key)) return;
  warned.add(key);
  void vscode.window.showWarningMessage(
    `Springfield ignores springfield.${key} from the ${ignored.join(' and ')} settings: ${why}.`,
  );
}
