// Runs inside the real extension host (code-server): "Install 'springfield' command in PATH" links the
// extension's wrapper into ~/.local/bin of the HOME the editor was given (on its login shell's PATH),
// the linked command runs `springfield --version` outside the editor, a second install leaves it,
// and "Uninstall" removes it; a `springfield` of the user's own is left alone by both.
// Run by trustAndPath.suite.ts, bundled by trustAndPath.test.ts (the fixture in SUITE_FIXTURE).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { lstatSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import * as vscode from 'vscode';

declare const SUITE_FIXTURE: string;

interface Fixture {
  home: string;
  version: string;
}

const fx = JSON.parse(SUITE_FIXTURE) as Fixture;

function present(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

/** `springfield` run as a terminal outside the editor would: by name from PATH, no editor variables. */
function springfield(args: string[], path: string): string {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env))
    if (k !== 'ELECTRON_RUN_AS_NODE' && !k.startsWith('VSCODE_')) env[k] = v;
  return execFileSync('springfield', args, { env: { ...env, PATH: path }, encoding: 'utf8' }).trim();
}

/** Called by trustAndPath.suite.ts, in the extension host. */
export async function run(): Promise<void> {
  const ext = vscode.extensions.getExtension('springfield.springfield');
  assert.ok(ext, 'springfield.springfield is loaded as a development extension');
  await ext.activate();
  assert.equal(homedir(), fx.home, 'the extension host has the HOME the test gave the editor');
  const local = join(fx.home, '.local', 'bin');
  assert.ok(
    (process.env.PATH ?? '').split(':').includes(local),
    `~/.local/bin is on the extension host's PATH (from ~/.profile): ${process.env.PATH}`,
  );
  const link = join(local, 'springfield');
  assert.equal(present(link), false);

  await vscode.commands.executeCommand('springfield.cli.installOnPath');
  assert.ok(lstatSync(link).isSymbolicLink(), `${link} is a link`);
  const wrapper = readlinkSync(link);
  assert.match(wrapper, /\/bin\/springfield$/);
  assert.match(readFileSync(wrapper, 'utf8'), /ELECTRON_RUN_AS_NODE=1 exec "\$runtime" "\$cli" "\$@"/);
  const outside = `${local}:/usr/bin:/bin`;
  assert.equal(
    springfield(['--version'], outside),
    fx.version,
    'the linked command runs the CLI with the editor runtime',
  );
  console.log(`springfield-cli-on-path: installed ${link} -> ${wrapper}; springfield --version printed ${fx.version}`);

  await vscode.commands.executeCommand('springfield.cli.installOnPath');
  assert.equal(readlinkSync(link), wrapper, 'installing again leaves the link as it is');

  await vscode.commands.executeCommand('springfield.cli.uninstallFromPath');
  assert.equal(present(link), false, 'uninstall removed the link');
  assert.ok(present(wrapper), "the wrapper stays for the editor's own terminals");

  writeFileSync(link, '#!/bin/sh\necho my-own-springfield\n', { mode: 0o755 });
  await vscode.commands.executeCommand('springfield.cli.installOnPath');
  await vscode.commands.executeCommand('springfield.cli.uninstallFromPath');
  assert.equal(
    springfield([], outside),
    'my-own-springfield',
    "a springfield of the user's own is neither replaced nor removed",
  );
  rmSync(link);
  console.log('springfield-cli-on-path finished');
}
