// Runs inside the real extension host (code-server): VS Code's agents call Springfield through
// `vscode.lm.invokeTool`, against a temporary repository, and the store (read through the CLI, as
// another process would) shows each call's effect. Bundled by agentTools.test.ts.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as vscode from 'vscode';

declare const SUITE_FIXTURE: string;

/** `root`: the main worktree; `worktree`: the epic's own, which this window has open. */
interface Fixture {
  node: string;
  cli: string;
  root: string;
  worktree: string;
  epic: string;
  plan: string;
}
interface StepJson {
  anchor: string;
  status: string;
  claimed_by: string | null;
  agent: string | null;
  items: { status: string }[];
}

const fx = JSON.parse(SUITE_FIXTURE) as Fixture;

function cli<T>(args: string[]): Promise<T> {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env))
    if (k !== 'ELECTRON_RUN_AS_NODE' && !k.startsWith('VSCODE_') && !k.startsWith('SPRINGFIELD_')) env[k] = v;
  return new Promise((resolve, reject) => {
    execFile(fx.node, [fx.cli, ...args, '--json'], { cwd: fx.root, env, encoding: 'utf8' }, (error, stdout, stderr) => {
      if (error) reject(new Error(`springfield ${args.join(' ')} failed: ${stderr || error.message}\n${stdout}`));
      else resolve(JSON.parse(stdout) as T);
    });
  });
}

async function step(): Promise<StepJson> {
  const { plans } = await cli<{ plans: { steps: StepJson[] }[] }>(['show', fx.plan]);
  const s = plans[0]?.steps[0];
  assert.ok(s, 'the plan has a step');
  return s;
}

async function invoke(name: string, input: object): Promise<string> {
  const result = await vscode.lm.invokeTool(name, { input, toolInvocationToken: undefined });
  return result.content.map((p) => (p instanceof vscode.LanguageModelTextPart ? p.value : '')).join('');
}

/** Entry point called by the smoke-test driver. */
export async function run(): Promise<void> {
  const ext = vscode.extensions.getExtension<{ api: { ready(): Promise<void> } }>('springfield.springfield');
  assert.ok(ext, 'springfield.springfield is loaded');
  await (await ext.activate()).api.ready();

  const names = vscode.lm.tools
    .map((t) => t.name)
    .filter((n) => n.startsWith('springfield_'))
    .sort();
  assert.deepEqual(names, [
    'springfield_claim_next_step',
    'springfield_commit_step',
    'springfield_context',
    'springfield_record_signal',
    'springfield_update_items',
  ]);
  const claimInfo = vscode.lm.tools.find((t) => t.name === 'springfield_claim_next_step');
  assert.deepEqual(
    (claimInfo?.inputSchema as { required?: string[] } | undefined)?.required,
    ['plan'],
    'the JSON schema from package.json',
  );
  console.log(`springfield-tools: ${names.length} tools registered`);

  const eventsBefore = (await cli<{ events: unknown[] }>(['events', '--limit', '1000'])).events.length;
  await assert.rejects(invoke('springfield_claim_next_step', { plan: 7 }), /springfield_claim_next_step: plan/);
  await assert.rejects(invoke('springfield_update_items', { plan: fx.plan, step: 'step-1' }), /give items or all/);
  await assert.rejects(invoke('springfield_record_signal', { epic: fx.epic, type: 'fine', summary: 'x' }), /type/);
  assert.equal(
    (await cli<{ events: unknown[] }>(['events', '--limit', '1000'])).events.length,
    eventsBefore,
    'bad input wrote nothing',
  );
  console.log('springfield-tools: bad input refused, nothing written');

  assert.match(await invoke('springfield_claim_next_step', { plan: fx.plan }), /Claimed step-1/);
  let s = await step();
  assert.deepEqual(
    [s.status, s.claimed_by, s.agent],
    ['claimed', fx.worktree, 'vscode-agent'],
    "claimed for this window's worktree (the epic's) as the editor agent",
  );

  assert.match(
    await invoke('springfield_context', {}),
    new RegExp(`## Epic ${fx.epic}: [\\s\\S]*## Step step-1: `),
    'the context of the step this worktree holds',
  );

  assert.match(
    await invoke('springfield_update_items', { plan: fx.plan, step: 'step-1', all: 'completed' }),
    /Updated 2 items of step-1/,
  );
  s = await step();
  assert.deepEqual(
    s.items.map((i) => i.status),
    ['completed', 'completed'],
  );

  writeFileSync(join(fx.worktree, 'hello.txt'), 'hello from the editor agent\n');
  assert.match(
    await invoke('springfield_commit_step', { message: 'Say hello' }),
    /Committed [0-9a-f]{12} and completed step-1/,
  );
  s = await step();
  assert.equal(s.status, 'completed');
  console.log('springfield-tools: claimed, ticked and committed step-1');

  await cli(['epic', 'finish', fx.epic]);
  assert.match(
    await invoke('springfield_record_signal', {
      epic: fx.epic,
      type: 'pass',
      summary: 'Says hello as planned',
      locations: [{ file: 'hello.txt', line: 1 }],
    }),
    /implemented → verified/,
  );
  const { signals } = await cli<{
    signals: { type: string; created_by: string; locations: { file: string; line: number }[] }[];
  }>(['signals', fx.epic]);
  assert.deepEqual(
    signals.map((x) => [x.type, x.created_by, x.locations.map((l) => `${l.file}:${l.line}`)]),
    [['pass', 'vscode-agent', ['hello.txt:1']]],
  );
  console.log('springfield-tools finished');
}
