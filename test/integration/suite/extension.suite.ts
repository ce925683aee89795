// Runs inside the real extension host (code-server): activation, contributions, commands against a
// temporary repository, and the Epics/Signals rows compared with what the CLI reports.
// Bundled by extensionHost.test.ts, which bakes the fixture into SUITE_FIXTURE.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { realpathSync } from 'node:fs';
import * as vscode from 'vscode';
import type { TreeNode } from '../../../src/extension/views/nodes.ts';

declare const SUITE_FIXTURE: string;

interface Fixture {
  node: string;
  cli: string;
  root: string;
  /** Where the started epics are built (their own worktrees): their agents' CLI calls run there. */
  epicWorktrees: { cache: string; typo: string };
  epics: { cache: string; search: string; typo: string };
  loosePlan: string;
}

interface Api {
  snapshot(): { plans: readonly { plan_path: string; steps: readonly StepJson[] }[] } | undefined;
  ready(): Promise<void>;
  rows(view: 'epics' | 'signals' | 'agents'): TreeNode[];
  refresh(): Promise<void>;
}

interface ItemJson {
  id: number;
  text: string;
  status: string;
}
interface StepJson {
  anchor: string;
  number: string;
  title: string;
  status: string;
  claimed_by: string | null;
  agent: string | null;
  claim_token: number | null;
  lease_expires_at: string | null;
  heartbeat_at: string | null;
  commit_hash: string | null;
  blocked_by: string[];
  items: ItemJson[];
  progress: { done: number; total: number };
  substeps: StepJson[];
}
interface PlanJson {
  plan_path: string;
  epic_id: string | null;
  steps: StepJson[];
}
interface EpicJson {
  id: string;
  title: string;
  status: string;
  progress: { steps_completed: number; steps_total: number } | null;
}
interface SignalJson {
  id: number;
  epic_id: string;
  status: string;
  locations: { file: string; line: number; end_line: number | null }[];
}

const fx = JSON.parse(SUITE_FIXTURE) as Fixture;
const root = realpathSync(fx.root);

/** Runs the CLI as another process would, with the extension host's variables stripped. */
function cli<T>(cwd: string, args: string[], agent = ''): Promise<T> {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env))
    if (k !== 'ELECTRON_RUN_AS_NODE' && !k.startsWith('VSCODE_')) env[k] = v;
  env.SPRINGFIELD_AGENT = agent;
  return new Promise((resolve, reject) => {
    execFile(fx.node, [fx.cli, ...args, '--json'], { cwd, env, encoding: 'utf8' }, (error, stdout, stderr) => {
      if (error) reject(new Error(`springfield ${args.join(' ')} failed: ${stderr || error.message}\n${stdout}`));
      else resolve(JSON.parse(stdout) as T);
    });
  });
}

async function plans(): Promise<PlanJson[]> {
  return (await cli<{ plans: PlanJson[] }>(root, ['show'])).plans;
}

async function stepOf(planPath: string, anchor: string): Promise<StepJson> {
  const plan = (await plans()).find((p) => p.plan_path === planPath);
  const step = plan?.steps.flatMap((s) => [s, ...s.substeps]).find((s) => s.anchor === anchor);
  assert.ok(step, `${planPath}#${anchor} in springfield show`);
  return step;
}

async function within<T>(ms: number, what: string, work: Thenable<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`${what} did not finish within ${ms} ms (a quick pick or dialog waiting?)`)),
      ms,
    );
  });
  try {
    return await Promise.race([Promise.resolve(work), late]);
  } finally {
    clearTimeout(timer);
  }
}

/** Re-runs `attempt` until `done()` holds: tree rows are known to the provider only once the view has rendered them. */
async function until(
  what: string,
  attempt: () => Thenable<unknown>,
  done: () => Promise<boolean>,
  ms = 60_000,
): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    await attempt();
    if (await done()) return;
    if (Date.now() > deadline) throw new Error(`${what}: not reflected in the store within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

const baseName = (p: string): string => p.split(/[\\/]/).filter(Boolean).at(-1) ?? p;

function row(rows: readonly TreeNode[], id: string): TreeNode {
  const found = rows.find((r) => r.id === id);
  assert.ok(found, `row ${id} (rows: ${rows.map((r) => r.id).join(', ')})`);
  return found;
}

/** Every step row says what `springfield show --json` says: status, progress counts, holder. */
function checkStepRow(rows: readonly TreeNode[], plan: PlanJson, st: StepJson): void {
  const planPath = plan.plan_path;
  const r = row(rows, `step:${planPath}#${st.anchor}`);
  const where = `${planPath}#${st.anchor}`;
  // Rows fit a 300 px sidebar: the title alone (its number in the tooltip), then the one fact that matters.
  assert.equal(r.label, st.title, `${where} label`);
  const tip = (r.tooltip?.() ?? '').replace(/\\/g, ''); // the tooltip is markdown, escaped
  assert.ok(tip.includes(`Step ${st.number}`), `${where} number in the tooltip`);
  assert.match(r.contextValue, new RegExp(`^step:${st.status}(:|$)`), `${where} status in contextValue`);
  const live = st.status === 'claimed' || st.status === 'in_progress';
  assert.equal(r.contextValue.includes(':held'), live && st.claimed_by === root, `${where} held by this window`);
  const desc = r.description ?? '';
  const done = st.progress.done + st.substeps.reduce((n, x) => n + x.progress.done, 0);
  const total = st.progress.total + st.substeps.reduce((n, x) => n + x.progress.total, 0);
  if (total > 0) assert.ok(desc.includes(` ${done}/${total}`), `${where} progress ${done}/${total} in "${desc}"`);
  if (live) {
    assert.ok(st.claimed_by, `${where} has a holder`);
    // Who holds it, shortest first: the agent, "you" here, else the worktree a person holds it in.
    const holder = st.agent ?? (st.claimed_by === root ? 'you' : `in ${baseName(st.claimed_by)}`);
    assert.ok(desc.startsWith(holder), `${where} holder ${holder} first in "${desc}"`);
    assert.match(desc, /· (\d+[hms]\S*|expired)/, `${where} lease in "${desc}"`);
    assert.ok(tip.includes(baseName(st.claimed_by)), `${where} worktree in the tooltip`);
    assert.ok(!desc.includes(st.claimed_by), `${where} no worktree path in "${desc}"`);
  } else if (st.status === 'completed' && st.commit_hash) {
    // A completed step says when in its row and names its commit in the tooltip.
    assert.match(desc, /(^| · )done \S/, `${where} "done … ago" in "${desc}"`);
    assert.ok(tip.includes(st.commit_hash.slice(0, 7)), `${where} commit in the tooltip`);
  } else if (st.status === 'pending') {
    const name = (a: string) => plan.steps.flatMap((x) => [x, ...x.substeps]).find((x) => x.anchor === a)?.title ?? a;
    assert.ok(
      desc.includes(st.blocked_by.length ? `waits for ${st.blocked_by.map(name).join(', ')}` : 'ready'),
      `${where} readiness in "${desc}"`,
    );
  }
  for (const item of st.items) {
    const i = row(rows, `item:${item.id}`);
    assert.equal(i.label, item.text, `item ${item.id} label`);
    assert.equal(i.checked, item.status === 'completed', `item ${item.id} (${item.text}) checked`);
  }
  for (const sub of st.substeps) checkStepRow(rows, plan, sub);
}

async function checkRowsMatchStore(api: Api): Promise<void> {
  await api.refresh();
  const rows = api.rows('epics');
  const shown = await plans();
  assert.ok(shown.length >= 3, 'fixture has three plans');
  for (const plan of shown) for (const st of plan.steps) checkStepRow(rows, plan, st);
  const { epics } = await cli<{ epics: EpicJson[] }>(root, ['epic', 'list']);
  for (const e of epics) {
    const r = row(rows, `epic:${e.id}`);
    assert.equal(r.label, e.title, 'the title alone: the id is in the tooltip');
    assert.ok((r.tooltip?.() ?? '').replace(/\\/g, '').includes(e.id), `${e.id} in the tooltip`);
    assert.match(r.contextValue, new RegExp(`^epic:${e.status}(:|$)`), `${e.id} status in contextValue`);
    assert.ok(r.description, `${e.id} says where it is: "${r.description}"`);
    if (e.progress)
      assert.ok(
        r.description?.includes(`${e.progress.steps_completed}/${e.progress.steps_total}`),
        `${e.id} progress in "${r.description}"`,
      );
  }
  assert.ok(
    row(rows, `epic:${fx.epics.search}`).contextValue.endsWith(':awaitingApproval'),
    'the search plan waits for approval',
  );
  const { signals } = await cli<{ signals: SignalJson[] }>(root, ['signals']);
  const signalRows = api.rows('signals');
  for (const sig of signals) {
    assert.equal(
      row(signalRows, `signal:${sig.id}`).contextValue,
      `signal:${sig.status === 'awaiting_person' ? 'awaiting' : 'closed'}`,
    );
    sig.locations.forEach((l, i) =>
      assert.equal(
        row(signalRows, `signal:${sig.id}:loc:${i}`).label,
        `${l.file}:${l.line}${l.end_line ? `-${l.end_line}` : ''}`,
      ),
    );
  }
  console.log(`springfield-suite: ${rows.length} epic rows and ${signalRows.length} signal rows match the store`);
}

/** Entry point called by the smoke-test driver. */
export async function run(): Promise<void> {
  const ext = vscode.extensions.getExtension<{ api: Api }>('springfield.springfield');
  assert.ok(ext, 'springfield.springfield is loaded as a development extension');
  const exports = await within(120_000, 'activation', ext.activate());
  assert.equal(ext.isActive, true);
  const api = exports.api;
  await within(120_000, 'the first store read', api.ready());
  assert.ok(api.snapshot(), 'the store was read after activation');
  assert.deepEqual(
    vscode.workspace.workspaceFolders?.map((f) => realpathSync(f.uri.fsPath)),
    [root],
  );

  const contributes = ext.packageJSON.contributes as {
    commands: { command: string }[];
    views: Record<string, { id: string }[]>;
  };
  const registered = new Set(await vscode.commands.getCommands(true));
  const missing = contributes.commands.map((c) => c.command).filter((c) => !registered.has(c));
  assert.deepEqual(missing, [], 'every contributed command is registered');
  const views = Object.values(contributes.views)
    .flat()
    .map((v) => v.id);
  assert.deepEqual(
    views.filter((v) => !registered.has(`${v}.focus`)),
    [],
    'every contributed view is registered',
  );
  assert.ok(registered.has('workbench.view.extension.springfield'), 'the Springfield container is registered');
  for (const v of views) await vscode.commands.executeCommand(`${v}.focus`);
  await vscode.commands.executeCommand('springfield.epics.focus');
  console.log(`springfield-suite: ${contributes.commands.length} commands and ${views.length} views registered`);

  // springfield.refresh: a write by another process is in the snapshot once the command resolves.
  const beat = await cli<{ lease_expires_at: string }>(
    fx.epicWorktrees.cache,
    ['heartbeat', 'plans/cache.md', 'step-3', '--lease', '3000'],
    'ralph-b',
  );
  await within(60_000, 'springfield.refresh', vscode.commands.executeCommand('springfield.refresh'));
  const step3 = api
    .snapshot()
    ?.plans.find((p) => p.plan_path === 'plans/cache.md')
    ?.steps.find((s) => s.anchor === 'step-3');
  assert.equal(step3?.lease_expires_at, beat.lease_expires_at, 'refresh shows the heartbeat written by the CLI');

  // springfield.claimNextStep: exactly one plan (the loose one) has a ready step, so no quick pick.
  const before = Date.now();
  await within(60_000, 'springfield.claimNextStep', vscode.commands.executeCommand('springfield.claimNextStep'));
  const claimed = await stepOf(fx.loosePlan, 'step-1');
  assert.equal(claimed.status, 'claimed');
  assert.equal(claimed.claimed_by, root, "claimed for the window's worktree");
  assert.equal(claimed.agent, null, 'claimed by the person, not an agent');
  assert.ok(claimed.claim_token !== null && claimed.claim_token >= 1);
  const lease = Date.parse(claimed.lease_expires_at ?? '') - before;
  assert.ok(lease > 7100_000 && lease < 7300_000, `lease follows springfield.leaseSeconds (7200 s), got ${lease} ms`);
  const ready = await cli<{ ready_steps: string[] }>(root, ['ready', fx.loosePlan]);
  assert.deepEqual(ready.ready_steps, [], 'nothing else is ready in the loose plan');

  // Step actions with a tree row as argument, as the inline buttons pass them.
  const stepRow = { id: `step:${fx.loosePlan}#step-1` };
  await until(
    'springfield.step.start',
    () => vscode.commands.executeCommand('springfield.step.start', stepRow),
    async () => (await stepOf(fx.loosePlan, 'step-1')).status === 'in_progress',
  );
  await within(
    60_000,
    'springfield.step.heartbeat',
    vscode.commands.executeCommand('springfield.step.heartbeat', stepRow),
  );
  assert.ok((await stepOf(fx.loosePlan, 'step-1')).heartbeat_at, 'heartbeat recorded');

  await checkRowsMatchStore(api);

  // A signal decided from the Signals view row: send back → the epic goes back to Ralph (Accept asks
  // first in a modal dialog, which the person-level UI tests click through).
  await vscode.commands.executeCommand('springfield.signals.focus');
  const signalRow = { id: 'signal:1' };
  const signalDecided = async (): Promise<boolean> =>
    (await cli<{ signals: SignalJson[] }>(root, ['signals'])).signals.some((s) => s.id === 1 && s.status === 'decided');
  await until(
    'springfield.signal.sendBack',
    async () => {
      if (!(await signalDecided())) await vscode.commands.executeCommand('springfield.signal.sendBack', signalRow);
    },
    signalDecided,
  );
  const typo = await cli<EpicJson>(root, ['epic', 'show', fx.epics.typo]);
  assert.equal(typo.status, 'in_progress', 'sending the signal back puts the epic back in progress');
  await api.refresh();
  assert.equal(row(api.rows('signals'), 'signal:1').contextValue, 'signal:closed');
  assert.match(row(api.rows('epics'), `epic:${fx.epics.typo}`).contextValue, /^epic:in_progress/);
  console.log('springfield-suite finished');
}
