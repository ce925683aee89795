// The README's main job: a throwaway repository with linked worktrees and a sample plan, three
// agents (real processes) claiming and completing steps through the CLI in parallel, and the result.
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const cli = join(root, 'dist', 'cli.js');
const base = mkdtempSync(join(tmpdir(), 'springfield-demo-'));
const repo = join(base, 'repo');

const PLAN = `# Plan: Add a caching layer

## Approach
Wrap the API client in a read-through cache; invalidate on writes.

## Step 1: Create API client {#step-1}
**Depends on:** none
**Tasks:**
- [ ] Implement the client
- [ ] Handle errors
**Tests:**
- [ ] Unit tests for the client

### Step 1.1: Retry policy {#step-1-1}
**Tasks:**
- [ ] Exponential backoff

## Step 2: Add cache store {#step-2}
**Depends on:** #step-1
**Tasks:**
- [ ] In-memory store
**Checkpoints:**
- [ ] \`npm test\` passes

## Step 3: Metrics {#step-3}
**Tasks:**
- [ ] Count hits and misses

## Step 4: Docs {#step-4}
**Depends on:** #step-2, #step-3
**Tasks:**
- [ ] Document the cache
`;

function git(cwd: string, ...args: string[]): void {
  execFileSync('git', args, { cwd, stdio: 'ignore' });
}

function sf(cwd: string, ...args: string[]): string {
  return execFileSync(process.execPath, [cli, ...args], { cwd, encoding: 'utf8' });
}

/** One agent: claim, tick every item, complete, until nothing is left for it. */
function agent(name: string, cwd: string): Promise<void> {
  const script = `
    const { execFileSync } = require('node:child_process');
    const sf = (...a) => JSON.parse(execFileSync(process.execPath, [${JSON.stringify(cli)}, ...a, '--json', '--agent', ${JSON.stringify(name)}], { encoding: 'utf8' }));
    for (let idle = 0; idle < 40;) {
      const c = sf('claim', 'plans/cache.md');
      if (!c.claimed) { if (c.reason === 'all_completed') break; idle++; Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 150); continue; }
      console.log(${JSON.stringify(name)} + ': claimed ' + c.step_anchor + ' (token ' + c.claim_token + ')');
      sf('start', 'plans/cache.md', c.step_anchor);
      for (const s of c.substeps) sf('update', 'plans/cache.md', s, '--all', 'completed');
      sf('update', 'plans/cache.md', c.step_anchor, '--all', 'completed');
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 300);
      const done = sf('complete', 'plans/cache.md', c.step_anchor);
      console.log(${JSON.stringify(name)} + ': completed ' + c.step_anchor + (done.plan_completed ? ' — plan complete' : ''));
    }`;
  return new Promise((ok, fail) => {
    const child = spawn(process.execPath, ['-e', script], { cwd, stdio: ['ignore', 'inherit', 'inherit'] });
    child.on('exit', (code) => (code === 0 ? ok() : fail(new Error(`${name} exited with ${code}`))));
  });
}

mkdirSync(join(repo, 'plans'), { recursive: true });
writeFileSync(join(repo, 'plans', 'cache.md'), PLAN);
writeFileSync(join(repo, 'README.md'), '# demo\n');
git(repo, 'init', '-q', '-b', 'main');
git(repo, 'config', 'user.email', 'demo@example.com');
git(repo, 'config', 'user.name', 'Springfield demo');
git(repo, 'add', '-A');
git(repo, 'commit', '-qm', 'Add the caching plan');
const worktrees = ['ralph-a', 'ralph-b', 'ralph-c'].map((name) => {
  const path = join(base, name);
  git(repo, 'worktree', 'add', '-q', path, '-b', name);
  return { name, path };
});

console.log(`Demo repository: ${repo}`);
console.log(`Worktrees: ${worktrees.map((w) => w.path).join(', ')}\n`);
console.log(sf(repo, 'init', 'plans/cache.md').trim() + '\n');
await Promise.all(worktrees.map((w) => agent(w.name, w.path)));
console.log('\n' + sf(repo, 'show', 'plans/cache.md'));
console.log(sf(repo, 'events', 'plans/cache.md', '--limit', '8'));
console.log(`\nTry it yourself:\n  alias springfield='${process.execPath} ${cli}'\n  cd ${worktrees[0]?.path}\n  springfield show --json | head -20\n  springfield --help`);
