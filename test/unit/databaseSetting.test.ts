import assert from 'node:assert/strict';
import { test } from 'node:test';
import { agentEnvironment, editorDatabase } from '../../src/extension/model/databaseSetting.ts';

const URL_A = 'postgres://sf:secret-a@db.example.com/springfield';
const URL_W = 'postgres://evil:secret-w@attacker.example.com/x';

test("springfield.databaseUrl from workspace or workspace-folder settings is ignored (reported); the user's counts", () => {
  assert.deepEqual(editorDatabase({}, { defaultValue: '', workspaceValue: URL_W }), {
    url: undefined,
    ignored: ['workspace'],
    problem: undefined,
  });
  assert.deepEqual(editorDatabase({}, { defaultValue: '', workspaceFolderValue: URL_W }), {
    url: undefined,
    ignored: ['workspace folder'],
    problem: undefined,
  });
  assert.deepEqual(editorDatabase({}, { defaultValue: '', globalValue: URL_A, workspaceValue: URL_W }), {
    url: URL_A,
    ignored: ['workspace'],
    problem: undefined,
  });
  assert.deepEqual(editorDatabase({}, { defaultValue: '', globalValue: `  ${URL_A} ` }).url, URL_A);
  assert.deepEqual(editorDatabase({}, { defaultValue: '' }), { url: undefined, ignored: [], problem: undefined });
  assert.deepEqual(editorDatabase({}, undefined), { url: undefined, ignored: [], problem: undefined });
});

test("SPRINGFIELD_DATABASE_URL in the editor's environment wins over the setting, as for the CLI", () => {
  assert.equal(editorDatabase({ SPRINGFIELD_DATABASE_URL: URL_W }, { globalValue: URL_A }).url, URL_W);
  assert.equal(editorDatabase({ SPRINGFIELD_DATABASE_URL: '/not/a/url' }, { globalValue: URL_A }).url, URL_A);
});

test('a user value that is not a postgres URL is a problem named without the value (it may hold a password)', () => {
  const db = editorDatabase({}, { globalValue: 'mysql://u:hunter2@h/db' });
  assert.equal(db.url, undefined);
  assert.match(db.problem ?? '', /springfield\.databaseUrl .* not a postgres:\/\/ or postgresql:\/\/ URL/);
  assert.ok(!(db.problem ?? '').includes('hunter2'));
});

test("agents started by the editor get its database in their environment, without the editor's own variables", () => {
  const base = {
    PATH: '/usr/bin',
    HOME: '/home/m',
    VSCODE_IPC_HOOK: 'x',
    ELECTRON_RUN_AS_NODE: '1',
    SPRINGFIELD_DATABASE_URL: URL_W,
  };
  const isEditor = (k: string) => k.startsWith('VSCODE_') || k === 'ELECTRON_RUN_AS_NODE';
  const env = agentEnvironment(base, isEditor, { SPRINGFIELD_AGENT: 'ralph' }, '/bin/sf', URL_A, ':');
  assert.deepEqual(env, {
    PATH: '/bin/sf:/usr/bin',
    HOME: '/home/m',
    SPRINGFIELD_AGENT: 'ralph',
    ELECTRON_RUN_AS_NODE: '1',
    SPRINGFIELD_DATABASE_URL: URL_A,
  });
  const sqlite = agentEnvironment({ PATH: '/usr/bin' }, isEditor, {}, undefined, undefined, ':');
  assert.deepEqual(sqlite, { PATH: '/usr/bin', ELECTRON_RUN_AS_NODE: '1' });
});
