// Runs inside the real extension host (code-server): a repository whose .vscode/settings.json turns
// the scheduler on and names its own commands and worktree folder. None of it counts.
// Run by trustAndPath.suite.ts, bundled by trustAndPath.test.ts (the fixture in SUITE_FIXTURE).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import * as vscode from 'vscode';

declare const SUITE_FIXTURE: string;

interface Fixture {
  node: string;
  cli: string;
  root: string;
  epic: string;
  marker: string;
  evilLocation: string;
}
interface RunSettings {
  config: { roles: Record<string, unknown>; verification: unknown[] };
  worktreeLocation: string;
  autoOrchestrate: boolean;
}
interface Api {
  ready(): Promise<void>;
  schedulerRunning(): boolean;
  runSettings(): RunSettings | undefined;
}

const fx = JSON.parse(SUITE_FIXTURE) as Fixture;

function cli<T>(args: string[]): T {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env))
    if (k !== 'ELECTRON_RUN_AS_NODE' && !k.startsWith('VSCODE_')) env[k] = v;
  return JSON.parse(execFileSync(fx.node, [fx.cli, ...args, '--json'], { cwd: fx.root, env, encoding: 'utf8' })) as T;
}

/** Called by trustAndPath.suite.ts, in the extension host. */
export async function run(): Promise<void> {
  const ext = vscode.extensions.getExtension<{ api: Api }>('springfield.springfield');
  assert.ok(ext, 'springfield.springfield is loaded as a development extension');
  const api = (await ext.activate()).api;
  await api.ready(); // the autoOrchestrate decision is taken as the first store read lands, before this resolves

  const config = vscode.workspace.getConfiguration('springfield');
  console.log(
    `springfield-trust: VS Code reports the workspace's autoOrchestrate as ${JSON.stringify(config.inspect('autoOrchestrate')?.workspaceValue)}, roles as ${JSON.stringify(config.inspect('roles')?.workspaceValue)}`,
  );
  assert.equal(
    api.schedulerRunning(),
    false,
    "the workspace's springfield.autoOrchestrate did not start the scheduler",
  );
  const settings = api.runSettings();
  assert.ok(settings);
  assert.deepEqual(
    [settings.autoOrchestrate, settings.config.roles, settings.config.verification, settings.worktreeLocation],
    [false, {}, [], ''],
    'none of the command settings the workspace sets is honoured',
  );

  // A person runs the scheduler: it works from the user's settings (the defaults here), not the workspace's.
  await vscode.commands.executeCommand('springfield.scheduler.runOnce');
  await vscode.commands.executeCommand('springfield.scheduler.runOnce');
  const epic = cli<{ status: string; worktree_path: string | null }>(['epic', 'show', fx.epic]);
  assert.equal(epic.status, 'in_progress', 'the person-started scheduler started the approved epic');
  assert.equal(
    epic.worktree_path,
    join(`${realpathSync(fx.root)}.springfield`, fx.epic),
    'in the default worktree folder, not the one the workspace names',
  );
  assert.equal(existsSync(fx.evilLocation), false, "nothing was created in the workspace's worktree folder");
  assert.deepEqual(
    cli<{ runs: unknown[] }>(['runs', '--epic', fx.epic]).runs,
    [],
    'no agent was started from the workspace roles',
  );
  assert.equal(existsSync(fx.marker), false, 'no command the workspace names ran');
  assert.equal(api.schedulerRunning(), false, 'runOnce does not leave the loop running');
  console.log('springfield-trust finished');
}
