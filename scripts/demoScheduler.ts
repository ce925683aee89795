// The demo's editor part: the demo repository gets stand-in agents (scripts/standInAgent.ts, real
// processes that do what their context file's prompt says through the CLI, paced so a person can
// watch), a verification command, and work for them — two epics with approved plans, a critical one
// whose review is the person's, and one without a plan — so that Start scheduler in the editor plans,
// builds in parallel terminals, verifies, reviews and merges, and offers the person a review. Nothing runs here: the person starts the scheduler. The config is allowed
// (docs/trust.md) in the demo's own state directory, which the demo's editor is started with.
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sf, type DemoRepo } from './demoRepo.ts';
import { ADMIT_ANY_MACHINE } from '../src/shared/fleetSettings.ts';

const STAND_IN = resolve(dirname(fileURLToPath(import.meta.url)), 'standInAgent.ts');

/** Seconds a stand-in waits before each command it runs; `npm run demo -- --pace 3` slows it down. */
export const DEFAULT_PACE = 1.5;

export const ORDERS_PLAN = `# Plan: Order history

## Approach
List a customer's orders from the order store, newest first, a page at a time.

## Constraints
No new runtime dependencies.

## Step 1: Order store query {#step-1}
**Tasks:**
- [ ] Query orders by customer
**Tests:**
- [ ] Newest first

## Step 2: Pagination {#step-2}
**Depends on:** #step-1
**Tasks:**
- [ ] Pages of 20

## Step 3: History page {#step-3}
**Depends on:** #step-2
**Tasks:**
- [ ] Render the list
`;

export const WISHLIST_PLAN = `# Plan: Wishlist

## Approach
A set of product ids per customer, kept beside the cart.

## Step 1: Wishlist store {#step-1}
**Tasks:**
- [ ] Add and remove products

## Step 2: Wishlist button {#step-2}
**Depends on:** #step-1
**Tasks:**
- [ ] Toggle from the product page
`;

export const REFUNDS_PLAN = `# Plan: Refunds

## Approach
Refund an order in full from the order page, once.

## Step 1: Refund an order {#step-1}
**Tasks:**
- [ ] Refund once, then mark the order refunded
`;

/** The demo's app (Run app on an epic): a page served from the epic's worktree on its first port. */
const APP = `require('node:http').createServer((q, s) => s.end('The shop, from ' + process.cwd() + '\\n')).listen(Number(process.env.PORT))`;

const TEST = `import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';

test('the greeting module exports greet', () => {
  assert.match(readFileSync(new URL('../src/greeting.ts', import.meta.url), 'utf8'), /export function greet/);
});
`;

export interface SchedulerDemo {
  /** Epics with approved plans, ready for the scheduler to start. */
  readonly orders: string;
  readonly wishlist: string;
  /** An epic without a plan: Lisa writes it, a person approves it. */
  readonly giftCards: string;
  /** A critical epic the person reviews (the config's "reviewedByPerson"): once built it waits for Review changes. */
  readonly refunds: string;
}

/**
 * Writes the agents' configuration into the demo repository, allows it with `springfield allow` in
 * `stateDir` (the demo's own state, never the user's: the demo's editor is started with it as
 * XDG_STATE_HOME, so its Start scheduler asks nothing), and adds the epics the agents work on.
 */
export function prepareSchedulerDemo(
  demo: DemoRepo,
  stateDir: string,
  paceSeconds = DEFAULT_PACE,
  options: {
    readonly anyMachine?: boolean;
    /** Put before Ralph's command (a test's wrapper around the stand-in); nothing by default. */
    readonly ralphPrefix?: readonly string[];
  } = {},
): SchedulerDemo {
  const repo = demo.root;
  const git = (...args: string[]) => execFileSync('git', args, { cwd: repo, stdio: 'ignore' });
  mkdirSync(join(repo, 'test'), { recursive: true });
  writeFileSync(join(repo, 'test', 'greeting.test.mjs'), TEST);
  writeFileSync(join(repo, 'plans', 'orders.md'), ORDERS_PLAN);
  writeFileSync(join(repo, 'plans', 'wishlist.md'), WISHLIST_PLAN);
  writeFileSync(join(repo, 'plans', 'refunds.md'), REFUNDS_PLAN);
  git('add', 'test', 'plans/orders.md', 'plans/wishlist.md', 'plans/refunds.md');
  git('commit', '-qm', 'Plans for order history, a wishlist and refunds; a test');
  const agent = [process.execPath, STAND_IN, '--pace', String(paceSeconds), '$SPRINGFIELD_CONTEXT_FILE'];
  writeFileSync(
    join(repo, '.springfield', 'config.json'),
    JSON.stringify(
      {
        roles: { lisa: agent, ralph: [...(options.ralphPrefix ?? []), ...agent], bart: agent },
        verification: [[process.execPath, '--test']],
        maxParallelAgents: 3,
        // The demo puts a plan, a decision and a review before the person at once: Lisa still plans Gift cards.
        maxWaitingOnPerson: 5,
        // Critical epics are the person's to review (Review changes), not Bart's (docs/lifecycle.md).
        reviewedByPerson: ['critical'],
        run: [[process.execPath, '-e', APP]],
        env: { PORT: '$SPRINGFIELD_PORT' },
        // A test about the person's loop admits every start however busy the machine (admission is judged by test/faults/fleet.test.ts).
        ...(options.anyMachine ? { admission: ADMIT_ANY_MACHINE } : {}),
      },
      null,
      2,
    ) + '\n',
  );
  sf(repo, ['allow'], { XDG_STATE_HOME: stateDir });
  const lisa = { SPRINGFIELD_AGENT: 'lisa' };
  const person = { SPRINGFIELD_AGENT: '' };
  const approved = (title: string, brief: string, plan: string, complexity = 'standard'): string => {
    const id = String(
      sf(repo, ['epic', 'create', title, '--brief', brief, '--complexity', complexity, '--priority', 'P1']).id,
    );
    sf(repo, ['plan', 'propose', id, plan], lisa);
    sf(repo, ['plan', 'approve', id], person);
    return id;
  };
  const orders = approved(
    'Order history',
    'Customers cannot find past orders. Acceptance: a paged list, newest first.',
    'plans/orders.md',
  );
  const wishlist = approved(
    'Wishlist',
    'Customers want to save products for later. Acceptance: add and remove from the product page.',
    'plans/wishlist.md',
  );
  const refunds = approved(
    'Refunds',
    'Customers ask for their money back by email. Acceptance: refund an order once, from its page.',
    'plans/refunds.md',
    'critical',
  );
  const giftCards = String(
    sf(repo, [
      'epic',
      'create',
      'Gift cards',
      '--brief',
      'Sell gift cards. Acceptance: buy one, redeem it at checkout.',
      '--complexity',
      'standard',
    ]).id,
  );
  return { orders, wishlist, giftCards, refunds };
}
