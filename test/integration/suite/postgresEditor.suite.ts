// Runs inside the real extension host (code-server) whose user settings name a PostgreSQL server:
// the plan initialised there shows (not the server a workspace setting names); a claim by the CLI from another clone as another host appears
// without this window refreshing itself and without any file changing. Bundled by postgresEditor.test.ts.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, watch } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import * as vscode from 'vscode';

declare const SUITE_FIXTURE: string;

interface Fixture {
  node: string;
  cli: string;
  root: string;
  other: string;
  url: string;
}
interface Step {
  anchor: string;
  status: string;
  claimed_by: string | null;
}
interface Snapshot {
  plans: { plan_path: string; steps: Step[] }[];
}
interface Row {
  id?: string;
  label?: unknown;
  description?: unknown;
}
interface Api {
  ready(): Promise<void>;
  snapshot(): Snapshot | undefined;
  rows(view: 'epics'): Row[];
}

const fx = JSON.parse(SUITE_FIXTURE) as Fixture;

function step(api: Api, anchor: string): Step | undefined {
  return api
    .snapshot()
    ?.plans.find((p) => p.plan_path === 'plans/p.md')
    ?.steps.find((s) => s.anchor === anchor);
}

/** Entry point called by the smoke-test driver. */
export async function run(): Promise<void> {
  const ext = vscode.extensions.getExtension<{ api: Api }>('springfield.springfield');
  assert.ok(ext, 'springfield.springfield is loaded as a development extension');
  const api = (await ext.activate()).api;
  await api.ready();
  // User settings can reach a remote extension host after activation: the window then switches to the server.
  const setting = (): string | undefined =>
    vscode.workspace.getConfiguration('springfield').inspect<string>('databaseUrl')?.globalValue;
  for (const until = Date.now() + 60_000; (!setting() || !step(api, 'step-1')) && Date.now() < until;) await sleep(50);
  assert.ok(setting()?.startsWith('postgres://'), 'the user setting is visible to the extension');
  const inspected = vscode.workspace.getConfiguration('springfield').inspect<string>('databaseUrl');
  console.log(
    `springfield-pgedit: the workspace's springfield.databaseUrl as VS Code reports it: ${JSON.stringify(inspected?.workspaceValue ?? null)}`,
  );
  assert.deepEqual(
    [step(api, 'step-1')?.status, step(api, 'step-2')?.status],
    ['pending', 'pending'],
    'the plan initialised on the server shows',
  );
  assert.equal(existsSync(join(fx.root, '.springfield')), false, 'nothing of the state is in the workspace');

  // Any file change in either clone during the claim would be seen here.
  const changed: string[] = [];
  const watchers = [fx.root, fx.other].map((dir) =>
    watch(dir, { recursive: true }, (_e, f) => changed.push(String(f))),
  );
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env))
    if (k !== 'ELECTRON_RUN_AS_NODE' && !k.startsWith('VSCODE_')) env[k] = v;
  Object.assign(env, { SPRINGFIELD_DATABASE_URL: fx.url, SPRINGFIELD_HOST: 'host-b', SPRINGFIELD_AGENT: 'ralph-b' });
  const sent = Date.now();
  const claim = JSON.parse(
    execFileSync(fx.node, [fx.cli, 'claim', 'plans/p.md', '--json'], { cwd: fx.other, env, encoding: 'utf8' }),
  ) as { claimed: boolean; step_anchor: string };
  assert.deepEqual([claim.claimed, claim.step_anchor], [true, 'step-1']);
  // No api.refresh(): only the store's LISTEN can bring the change in (the generous wait is not a speed check).
  const deadline = Date.now() + 60_000;
  while (step(api, 'step-1')?.status !== 'claimed' && Date.now() < deadline) await sleep(20);
  const shownAfter = Date.now() - sent;
  for (const w of watchers) w.close();
  const shown = step(api, 'step-1');
  assert.equal(shown?.status, 'claimed', 'the claim from the other host shows in the snapshot');
  assert.equal(shown?.claimed_by, fx.other, 'held by the other clone');
  const row = api.rows('epics').find((r) => r.id === 'step:plans/p.md#step-1');
  assert.ok(
    row,
    `the tree has the step's row (rows: ${api
      .rows('epics')
      .map((r) => r.id)
      .join(', ')})`,
  );
  assert.deepEqual(
    changed.filter((f) => f !== '.git' && !f.startsWith('.git/')),
    [],
    'no file outside git metadata changed (the other clone caches its repository id there)',
  );
  console.log(
    `springfield-pgedit: the claim by host-b showed ${shownAfter} ms after the CLI was started (the CLI's own start-up included); row ${JSON.stringify(row.label)} ${JSON.stringify(row.description)}`,
  );
  console.log('springfield-pgedit finished');
}
