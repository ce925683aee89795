// Builds the demo repository: linked worktrees, an epic in progress (one step done, one claimed),
// an epic whose plan waits for approval, and an implemented epic with a review signal that waits
// for a person, with locations in the code. Everything goes through the real CLI. An epic's steps
// are claimed and built in its own worktree (`epic start` makes it; docs/lifecycle.md, "Where work
// happens"); the linked worktrees ralph-a and ralph-b are where agents take steps of a plan that
// belongs to no epic.
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const CLI = join(root, 'dist', 'cli.cjs');

export const CACHE_PLAN = `# Plan: Add a caching layer

## Approach
Wrap the API client in a read-through cache; invalidate on writes.

## Constraints
No new runtime dependencies.

## Step 1: Create API client {#step-1}
**Depends on:** none
**Tasks:**
- [ ] Implement the client
- [ ] Handle errors
**Tests:**
- [ ] Unit tests for the client

## Step 2: Add cache store {#step-2}
**Depends on:** #step-1
**Tasks:**
- [ ] In-memory store
- [ ] Add cache invalidation
**Checkpoints:**
- [ ] \`npm test\` passes

### Step 2.1: Eviction policy {#step-2-1}
**Tasks:**
- [ ] LRU eviction

## Step 3: Metrics {#step-3}
**Tasks:**
- [ ] Count hits and misses

## Step 4: Docs {#step-4}
**Depends on:** #step-2, #step-3
**Tasks:**
- [ ] Document the cache
`;

export const SEARCH_PLAN = `# Plan: Search

## Approach
A tokeniser and an inverted index.

## Step 1: Tokeniser {#step-1}
**Tasks:**
- [ ] Split words
**Tests:**
- [ ] Unicode cases

## Step 2: Index {#step-2}
**Depends on:** #step-1
**Tasks:**
- [ ] Inverted index
`;

export const ONBOARDING_PLAN = `# Plan: Onboarding docs

## Step 1: Outline {#step-1}
**Tasks:**
- [ ] Write the outline

## Step 2: Install guide {#step-2}
**Depends on:** #step-1
**Tasks:**
- [ ] Document installation

## Step 3: FAQ {#step-3}
**Tasks:**
- [ ] Collect questions

## Step 4: Glossary {#step-4}
**Tasks:**
- [ ] Define terms

## Step 5: Review {#step-5}
**Depends on:** #step-2, #step-3, #step-4
**Tasks:**
- [ ] Read it all once more
`;

export const TYPO_PLAN = `# Plan: Fix typo in greeting

## Step 1: Fix the greeting {#step-1}
**Tasks:**
- [ ] Correct the spelling
`;

export interface DemoRepo {
  readonly root: string;
  /** Linked worktrees of their own (ralph-a, ralph-b), for plans that belong to no epic. */
  readonly worktrees: Record<string, string>;
  readonly epics: { readonly cache: string; readonly search: string; readonly typo: string };
  /** The worktrees `epic start` made for the started epics, where their steps are claimed and built. */
  readonly epicWorktrees: { readonly cache: string; readonly typo: string };
}

function git(cwd: string, ...args: string[]): void {
  execFileSync('git', args, { cwd, stdio: 'ignore' });
}

/** Runs the CLI as an agent or person would; returns its JSON. */
export function sf(cwd: string, args: string[], env: NodeJS.ProcessEnv = {}): Record<string, unknown> {
  const out = execFileSync(process.execPath, [CLI, ...args, '--json'], {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, ...env },
  });
  return JSON.parse(out) as Record<string, unknown>;
}

/** Creates the demo repository under `base` (which must exist and be empty), running the CLI with `run` (the tests pass one that runs it in their own process). */
export function buildDemoRepo(base: string, run: typeof sf = sf): DemoRepo {
  const repo = join(base, 'shop');
  mkdirSync(join(repo, 'plans'), { recursive: true });
  mkdirSync(join(repo, 'src'), { recursive: true });
  writeFileSync(join(repo, 'plans', 'cache.md'), CACHE_PLAN);
  writeFileSync(join(repo, 'plans', 'search.md'), SEARCH_PLAN);
  writeFileSync(join(repo, 'plans', 'typo.md'), TYPO_PLAN);
  writeFileSync(join(repo, 'plans', 'onboarding.md'), ONBOARDING_PLAN);
  writeFileSync(
    join(repo, 'src', 'greeting.ts'),
    'export function greet(name: string): string {\n  return `Helo, ${name}!`;\n}\n',
  );
  writeFileSync(
    join(repo, 'src', 'cache.ts'),
    'const store = new Map<string, unknown>();\n\nexport function put(key: string, value: unknown): void {\n  store.set(key, value);\n}\n\nexport function get(key: string): unknown {\n  return store.get(key);\n}\n',
  );
  writeFileSync(join(repo, 'README.md'), '# shop\n\nA demo repository for Springfield.\n');
  git(repo, 'init', '-q', '-b', 'main');
  git(repo, 'config', 'user.email', 'demo@example.com');
  git(repo, 'config', 'user.name', 'Springfield demo');
  git(repo, 'add', '-A');
  git(repo, 'commit', '-qm', 'Shop with plans');
  const worktrees: Record<string, string> = {};
  for (const name of ['ralph-a', 'ralph-b']) {
    worktrees[name] = join(base, `shop.${name}`);
    git(repo, 'worktree', 'add', '-q', worktrees[name] as string, '-b', name);
  }
  const lisa = { SPRINGFIELD_AGENT: 'lisa' };
  const person = { SPRINGFIELD_AGENT: '' };

  const cache = String(
    run(repo, [
      'epic',
      'create',
      'Add a caching layer',
      '--brief',
      'Reads are slow. Acceptance: repeated reads hit the cache; writes invalidate.',
      '--plan-md',
    ]).id,
  );
  run(repo, ['plan', 'propose', cache, 'plans/cache.md'], lisa);
  run(repo, ['plan', 'approve', cache], person);
  // Two agents build the cache epic side by side, both in its worktree (as the scheduler's would).
  const a = String(run(repo, ['epic', 'start', cache], person).worktree_path);
  run(a, ['claim', 'plans/cache.md'], { SPRINGFIELD_AGENT: 'ralph-a' });
  run(a, ['update', 'plans/cache.md', 'step-1', '--all', 'completed'], { SPRINGFIELD_AGENT: 'ralph-a' });
  writeFileSync(
    join(a, 'src', 'client.ts'),
    'export async function fetchJson(url: string): Promise<unknown> {\n  return (await fetch(url)).json();\n}\n',
  );
  run(a, ['commit', '-m', 'Add the API client'], { SPRINGFIELD_AGENT: 'ralph-a' });
  run(a, ['claim', 'plans/cache.md', '--lease', '6300'], { SPRINGFIELD_AGENT: 'ralph-a' });
  run(a, ['start', 'plans/cache.md', 'step-2'], { SPRINGFIELD_AGENT: 'ralph-a' });
  run(a, ['update', 'plans/cache.md', 'step-2', '--task', '0', 'completed'], { SPRINGFIELD_AGENT: 'ralph-a' });
  run(a, ['claim', 'plans/cache.md', '--lease', '480'], { SPRINGFIELD_AGENT: 'ralph-b' });

  const search = String(run(repo, ['epic', 'create', 'Search', '--brief', 'Find products by name.', '--plan-md']).id);
  run(repo, ['plan', 'propose', search, 'plans/search.md'], lisa);

  const typo = String(
    run(repo, ['epic', 'create', 'Fix typo in greeting', '--brief', 'The greeting says "Helo".', '--plan-md']).id,
  );
  run(repo, ['plan', 'propose', typo, 'plans/typo.md'], lisa);
  run(repo, ['plan', 'approve', typo], person);
  const t = String(run(repo, ['epic', 'start', typo], person).worktree_path);
  run(t, ['claim', 'plans/typo.md'], { SPRINGFIELD_AGENT: 'ralph-c' });
  run(t, ['update', 'plans/typo.md', 'step-1', '--all', 'completed'], { SPRINGFIELD_AGENT: 'ralph-c' });
  // Ralph's change, for a person to review (Review changes): the greeting still misspelt, and a change to the cache that slipped in.
  writeFileSync(
    join(t, 'src', 'greeting.ts'),
    'export function greet(name: string): string {\n  return `Hallo, ${name}!`;\n}\n',
  );
  writeFileSync(
    join(t, 'src', 'cache.ts'),
    'const store = new Map<string, unknown>();\n\nexport function put(key: string, value: unknown): void {\n  console.log(`put ${key}`);\n  store.set(key, value);\n}\n\nexport function get(key: string): unknown {\n  return store.get(key);\n}\n',
  );
  run(t, ['commit', '-m', 'Fix the greeting'], { SPRINGFIELD_AGENT: 'ralph-c' });
  run(t, ['complete', 'plans/typo.md', 'step-1'], { SPRINGFIELD_AGENT: 'ralph-c' });
  run(repo, ['epic', 'finish', typo, '--reason', 'verification passed'], person);
  run(
    repo,
    [
      'signal',
      typo,
      '--type',
      'implementation_failure',
      '--summary',
      'The greeting is still misspelt',
      '--await-person',
      '--location',
      'src/greeting.ts:2',
      '--note',
      '"Helo" should be "Hello"',
      '--location',
      'src/cache.ts:3:5',
      '--note',
      'unrelated change slipped in',
    ],
    { SPRINGFIELD_AGENT: 'bart' },
  );
  return { root: repo, worktrees, epics: { cache, search, typo }, epicWorktrees: { cache: a, typo: t } };
}
