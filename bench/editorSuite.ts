// Runs inside the real extension host (bench/editor.ts bundles it with esbuild, vscode external):
// reads Springfield's own activation time, times its real Epics NodeTreeProvider on the
// workspace's biggest epic, breaks activation down, and CPU-profiles the host while idle.
// Builds nothing and writes nothing; prints one line `SPRINGFIELD_BENCH {...}`.
import * as vscode from 'vscode';
import { Session } from 'node:inspector/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { locateRepo } from '../src/core/git/repo.ts';
import { sqliteStore } from '../src/core/store/sqlite/sqliteStore.ts';
import type { Store } from '../src/core/store/store.ts';
import { loadSnapshot } from '../src/extension/model/snapshot.ts';
import type { SpringfieldExtension } from '../src/extension/springfield.ts';
import type { NodeTreeProvider, Row } from '../src/extension/views/treeProvider.ts';

const RUNS = 30;
const FEW = 10;
const WARMUP = 3;
const IDLE_PROFILE_MS = 15_000;

interface Stats {
  median: number;
  p95: number;
}

/** Wall time; `cpu` is this thread's CPU time (wall ≫ cpu means the host waited for a CPU); GC per run. */
interface Timed extends Stats {
  cpu: Stats;
  gcMs: number;
}

function stats(values: readonly number[]): Stats {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number): number =>
    sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? NaN;
  return { median: at(0.5), p95: at(0.95) };
}

let gcTotal = 0;
const gcObserver = new PerformanceObserver((list) => {
  for (const e of list.getEntries()) gcTotal += e.duration;
});

const threadCpu = (): number => {
  const c = process.threadCpuUsage();
  return (c.user + c.system) / 1000;
};

async function time(fn: () => unknown, runs = RUNS): Promise<Timed> {
  for (let i = 0; i < WARMUP; i++) await fn();
  await new Promise((r) => setImmediate(r));
  const gc0 = gcTotal;
  const wall: number[] = [];
  const cpu: number[] = [];
  for (let i = 0; i < runs; i++) {
    const c0 = threadCpu();
    const t0 = performance.now();
    await fn();
    wall.push(performance.now() - t0);
    cpu.push(threadCpu() - c0);
  }
  await new Promise((r) => setImmediate(r));
  return { ...stats(wall), cpu: stats(cpu), gcMs: (gcTotal - gc0) / runs };
}

async function once(fn: () => unknown): Promise<{ wall: number; cpu: number }> {
  const c0 = threadCpu();
  const t0 = performance.now();
  await fn();
  return { wall: performance.now() - t0, cpu: threadCpu() - c0 };
}

/** What VS Code does when a row is expanded: getChildren, then getTreeItem for every child. */
function expand(provider: NodeTreeProvider, row: Row): Row[] {
  const kids = provider.getChildren(row);
  for (const k of kids) provider.getTreeItem(k);
  return kids;
}

interface ProfileNode {
  id: number;
  callFrame: { url: string; functionName: string };
  children?: number[];
}

/** Samples this thread while idle and splits the time by script: Springfield's bundle, other extensions, idle, GC. */
async function idleProfile(bundle: string): Promise<Record<string, number>> {
  const session = new Session();
  session.connect();
  try {
    await session.post('Profiler.enable');
    await session.post('Profiler.setSamplingInterval', { interval: 500 });
    await session.post('Profiler.start');
    await new Promise((r) => setTimeout(r, IDLE_PROFILE_MS));
    const { profile } = (await session.post('Profiler.stop')) as {
      profile: { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[] };
    };
    const parent = new Map<number, ProfileNode>();
    const byId = new Map(profile.nodes.map((n) => [n.id, n]));
    for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n);
    const bucket = (id: number): string => {
      for (let n = byId.get(id); n; n = parent.get(n.id)) {
        const { url, functionName } = n.callFrame;
        if (url === '' && /^\((idle|garbage collector|program)\)$/.test(functionName)) return functionName;
        if (url)
          return url.includes(bundle)
            ? 'springfield'
            : /suite\.cjs/.test(url)
              ? 'bench suite'
              : `other: ${url.replace(/^.*\/(extensions|out)\//, '')}`;
      }
      return 'native, no script';
    };
    const out: Record<string, number> = { wallMs: IDLE_PROFILE_MS };
    profile.samples.forEach((id, i) => {
      const key = bucket(id);
      out[key] = (out[key] ?? 0) + (profile.timeDeltas[i] ?? 0) / 1000;
    });
    return out;
  } finally {
    session.disconnect();
  }
}

/** Entry point called by the VS Code test runner. */
export async function run(): Promise<void> {
  gcObserver.observe({ entryTypes: ['gc'] });
  const ext = vscode.extensions.getExtension<SpringfieldExtension>('springfield.springfield');
  if (!ext) throw new Error('springfield.springfield is not loaded');
  const api = (ext.isActive ? ext.exports : await ext.activate()).api;
  const result: Record<string, unknown> = { activationMs: api.activationMs(), pid: process.pid };
  const readyStarted = performance.now();
  await api.ready();
  result.firstLoadAfterActivationMs = performance.now() - readyStarted;
  const snapshot = api.snapshot();
  if (!snapshot) throw new Error(`no snapshot after activation (activation took ${api.activationMs()} ms)`);
  result.epics = snapshot.epics.length;
  result.steps = snapshot.plans.reduce((n, p) => n + p.steps.length, 0);
  result.items = snapshot.plans.reduce((n, p) => n + p.steps.reduce((m, s) => m + s.items.length, 0), 0);

  // What activate() does that is not vscode API: find the repository, open the store, read it all.
  const folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath ?? '';
  const location = locateRepo(folder);
  result.locateRepo = await once(() => locateRepo(folder));
  let store: Store | undefined;
  result.openStore = await once(() => (store = sqliteStore(location.dbPath)));
  if (store) {
    const opened = store;
    result.firstLoadSnapshot = await once(() => loadSnapshot(opened, folder));
    result.loadSnapshot = await time(() => loadSnapshot(opened, folder), FEW);
    opened.close();
  }
  // SignalComments.update creates one comment thread per signal location with a MarkdownString body.
  const controller = vscode.comments.createCommentController('springfield.bench', 'bench');
  const thread = (): void =>
    controller
      .createCommentThread(vscode.Uri.file(join(folder, 'src', 'greeting.ts')), new vscode.Range(1, 0, 1, 0), [
        {
          body: new vscode.MarkdownString(
            '**implementation failure** — The greeting is still misspelt\n\n"Helo" should be "Hello"\n\n_Waiting for your decision: Send back to Ralph, Escalate to Lisa or Accept._',
          ),
          mode: vscode.CommentMode.Preview,
          author: { name: 'Bart (bench)' },
          timestamp: new Date(),
        },
      ])
      .dispose();
  result.firstCommentThread = await once(thread);
  result.commentThread = await time(thread, FEW);
  controller.dispose();
  const bundle = join(ext.extensionPath, 'dist', 'extension.cjs');
  const req = createRequire(bundle);
  result.bundleEval = await time(() => {
    delete req.cache[req.resolve(bundle)];
    return req(bundle);
  }, FEW);

  const biggest = [...snapshot.plans].filter((p) => p.epic_id).sort((a, b) => b.steps.length - a.steps.length)[0];
  const provider = api.epicsProvider();
  const epicRow = provider.getChildren().find((r) => biggest && r.id === `epic:${biggest.epic_id}`);
  if (biggest && epicRow && biggest.steps.length >= 100) {
    result.bigEpicSteps = biggest.steps.length;
    result.getChildrenEpic = await time(() => provider.getChildren(epicRow));
    result.expandEpic = await time(() => expand(provider, epicRow));
    const stepRows = provider.getChildren(epicRow);
    let itemRows = 0;
    result.expandEveryStep = await time(() => {
      itemRows = 0;
      for (const s of stepRows) itemRows += expand(provider, s).length;
    }, FEW);
    result.itemRows = itemRows;
    result.updateAllSeen = await time(() => provider.update(snapshot), FEW);
    result.refresh = await time(() => api.refresh(), FEW);
    result.plainTreeItems = await time(() => {
      const out = [];
      for (let i = 0; i < stepRows.length; i++) {
        const item = new vscode.TreeItem(`step-${i}  Migrate module ${i}`, vscode.TreeItemCollapsibleState.Collapsed);
        item.id = `step:plans/big.md#step-${i}`;
        item.description = `▰▰▱▱▱ ${i % 10}/10   ready`;
        item.contextValue = 'step:pending';
        item.iconPath = new vscode.ThemeIcon('circle-large-outline', new vscode.ThemeColor('charts.blue'));
        out.push(item);
      }
      return out;
    });
    result.idleProfile = await idleProfile(bundle);
  }
  console.log(`SPRINGFIELD_BENCH ${JSON.stringify(result)}`);
}
