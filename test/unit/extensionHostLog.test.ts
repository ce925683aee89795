// Which extension host errors the editor tests lay at Springfield's door (scripts/extensionHostLog.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { extensionHostErrors } from '../../scripts/extensionHostLog.ts';

const started = (pid: number, at: string) => `2026-12-03 ${at} [info] Extension host with pid ${pid} started`;
const terminating = (at: string) =>
  `2026-12-03 ${at} [info] Extension host terminating: received terminate message from renderer`;
const closed = (at: string, file: string) =>
  `2026-12-03 ${at} [error] Error: Channel has been closed\n    at o (${file}:1:2)\n    at Object.appendLine (${file}:3:4)`;
const builtin = '/cs/lib/vscode/extensions/json-language-features/client/dist/node/jsonClientMain.js';
const ours = '/ext/springfield.springfield-0.9.0/dist/extension.cjs';

test('an error while the host runs counts, with its stack, whoever logged it', () => {
  const log = [started(1, '02:35:00.000'), closed('02:35:01.000', builtin), ''].join('\n');
  const { errors, atShutdown } = extensionHostErrors(log);
  assert.deepEqual(errors, [closed('02:35:01.000', builtin)]);
  assert.deepEqual(atShutdown, []);
});

test("after the host was told to terminate, VS Code's own extensions' errors are reported apart", () => {
  const log = [
    started(1, '02:35:00.000'),
    terminating('02:36:06.000'),
    closed('02:36:06.063', builtin),
    closed('02:36:06.063', builtin),
    started(2, '02:36:10.000'),
    closed('02:36:11.000', builtin),
  ].join('\n');
  const { errors, atShutdown } = extensionHostErrors(log);
  assert.deepEqual(atShutdown, [closed('02:36:06.063', builtin), closed('02:36:06.063', builtin)]);
  assert.deepEqual(errors, [closed('02:36:11.000', builtin)], 'the next host runs: its errors count again');
});

test('an error naming Springfield counts even while the host terminates', () => {
  const log = [started(1, '02:35:00.000'), terminating('02:36:06.000'), closed('02:36:06.063', ours)].join('\n');
  assert.deepEqual(extensionHostErrors(log).errors, [closed('02:36:06.063', ours)]);
});

test('info lines are not errors', () => {
  assert.deepEqual(extensionHostErrors([started(1, '02:35:00.000'), terminating('02:36:00.000')].join('\n')), {
    errors: [],
    atShutdown: [],
  });
});
