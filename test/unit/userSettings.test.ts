import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { USER_ONLY_SETTINGS, userValue } from '../../src/extension/model/userValue.ts';
import { PROJECT_ROOT } from '../helpers/gitRepo.ts';

interface Setting {
  scope?: string;
  type: string;
  items?: unknown;
  additionalProperties?: unknown;
}
const settings = JSON.parse(readFileSync(join(PROJECT_ROOT, 'package.json'), 'utf8')) as {
  contributes: { configuration: { properties: Record<string, Setting> } };
  capabilities: { untrustedWorkspaces: { restrictedConfigurations: string[] } };
};

test('every setting that names a command, a path to run in, or starts the scheduler can be set only by the user (scope machine)', () => {
  const props = settings.contributes.configuration.properties;
  for (const key of USER_ONLY_SETTINGS) {
    const p = props[`springfield.${key}`];
    assert.ok(p, `springfield.${key} is contributed`);
    assert.ok(
      p.scope === 'machine' || p.scope === 'application',
      `springfield.${key} has scope ${p.scope ?? 'window (the default), which a workspace may set'}`,
    );
  }
  // Any setting whose value can hold text could name a program or a path: it must be user-only too.
  const textual = Object.entries(props)
    .filter(([, p]) => JSON.stringify(p).includes('"type":"string"'))
    .map(([k]) => k.replace(/^springfield\./, ''));
  assert.deepEqual(
    textual.filter((k) => !USER_ONLY_SETTINGS.includes(k)),
    [],
    'no other setting can carry a command or a path',
  );
  assert.deepEqual(
    USER_ONLY_SETTINGS.filter(
      (k) => !settings.capabilities.untrustedWorkspaces.restrictedConfigurations.includes(`springfield.${k}`),
    ),
    [],
  );
});

test('a value from workspace or workspace-folder settings is ignored (and reported); user settings and defaults count', () => {
  assert.deepEqual(userValue({ defaultValue: false, workspaceValue: true }, false), {
    value: false,
    ignored: ['workspace'],
  });
  assert.deepEqual(userValue({ defaultValue: false, globalValue: true, workspaceFolderValue: false }, false), {
    value: true,
    ignored: ['workspace folder'],
  });
  assert.deepEqual(userValue({ defaultValue: {}, workspaceLanguageValue: { ralph: ['x'] } }, {}), {
    value: {},
    ignored: ['workspace'],
  });
  assert.deepEqual(userValue({ globalValue: ['a'] }, []), { value: ['a'], ignored: [] });
  assert.deepEqual(userValue(undefined, 'fallback'), { value: 'fallback', ignored: [] });
});
