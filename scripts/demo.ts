// The README's main job: a demo repository with linked worktrees, three agents (real processes)
// claiming and completing steps through the CLI in parallel, then the extension in a real VS Code
// (code-server) on that repository. `--no-editor` stops after the CLI part. The demo's folder is
// removed when it ends (Ctrl+C included) unless `--keep` is given.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureCodeServer, startCodeServer } from './codeServer.ts';
import { runStandInAgents } from './demoAgents.ts';
import { buildDemoRepo, CLI } from './demoRepo.ts';
import { DEFAULT_PACE, prepareSchedulerDemo } from './demoScheduler.ts';
import { DEMO_PACKAGES, ensureAptPackages } from './systemDeps.ts';

const projectRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const noEditor = process.argv.includes('--no-editor');
const keep = process.argv.includes('--keep');
const paceAt = process.argv.indexOf('--pace');
const pace = paceAt >= 0 ? Number(process.argv[paceAt + 1]) : DEFAULT_PACE;
if (!(pace >= 0 && pace <= 60)) {
  console.error(
    `--pace takes the seconds a stand-in agent waits before each command (0 to 60), got '${process.argv[paceAt + 1] ?? ''}'`,
  );
  process.exit(2);
}

/** One agent: claim, tick every item, complete, until nothing is left for it. */
function agent(name: string, cwd: string): Promise<void> {
  const script = `
    const { execFileSync } = require('node:child_process');
    const sf = (...a) => JSON.parse(execFileSync(process.execPath, [${JSON.stringify(CLI)}, ...a, '--json'], { encoding: 'utf8', env: { ...process.env, SPRINGFIELD_AGENT: ${JSON.stringify(name)} } }));
    const nap = (ms) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
    for (let idle = 0; idle < 60;) {
      const c = sf('claim', 'plans/onboarding.md');
      if (!c.claimed) { if (c.reason === 'all_completed') break; idle++; nap(100); continue; }
      console.log('  ' + ${JSON.stringify(name)}.padEnd(8) + ' claimed   ' + c.step_anchor + ' (token ' + c.claim_token + ')');
      sf('start', 'plans/onboarding.md', c.step_anchor);
      sf('update', 'plans/onboarding.md', c.step_anchor, '--all', 'completed');
      nap(250);
      const done = sf('complete', 'plans/onboarding.md', c.step_anchor);
      console.log('  ' + ${JSON.stringify(name)}.padEnd(8) + ' completed ' + c.step_anchor + (done.plan_completed ? ' — plan complete' : ''));
    }`;
  return new Promise((ok, fail) => {
    const child = spawn(process.execPath, ['-e', script], { cwd, stdio: ['ignore', 'inherit', 'inherit'] });
    child.on('exit', (code) => (code === 0 ? ok() : fail(new Error(`${name} exited with ${code}`))));
  });
}

function show(cwd: string, ...args: string[]): Promise<void> {
  return new Promise((ok) => spawn(process.execPath, [CLI, ...args], { cwd, stdio: 'inherit' }).on('exit', () => ok()));
}

const base = mkdtempSync(join(tmpdir(), 'springfield-demo-'));
process.on('exit', () => {
  if (!keep) rmSync(base, { recursive: true, force: true, maxRetries: 3 });
});
/** What Ctrl+C does: exit (the folder goes with it); once the editor runs, it is stopped first. */
let onSignal = (): void => process.exit(130);
process.on('SIGINT', () => onSignal());
process.on('SIGTERM', () => onSignal());
console.log('Building the demo repository (epics, an approved plan, a plan awaiting approval, claims, a signal)…');
const demo = buildDemoRepo(base);
console.log(
  `Demo repository: ${demo.root}\nWorktrees: ${[...Object.values(demo.worktrees), ...Object.values(demo.epicWorktrees)].join(', ')}\n`,
);
await show(demo.root, 'init', 'plans/onboarding.md');
console.log('\nThree agents claim steps of plans/onboarding.md in parallel, from three worktrees:');
await Promise.all([
  agent('ralph-a', demo.worktrees['ralph-a'] as string),
  agent('ralph-b', demo.worktrees['ralph-b'] as string),
  agent('ralph-m', demo.root),
]);
console.log('');
await show(demo.root, 'show', 'plans/onboarding.md');
console.log('');
await show(demo.root, 'epic', 'list');
console.log(
  '\nStand-in agents plan, build and review an epic under the scheduler, each following only the prompt in its context file:',
);
runStandInAgents(base);
if (keep || !noEditor)
  console.log(
    `\nTry the CLI yourself${keep ? '' : ' while the demo runs'}:\n  alias springfield='${process.execPath} ${CLI}'\n  cd ${demo.epicWorktrees.cache}\n  springfield context\n  springfield --help\n`,
  );
else console.log(`\nThe demo repository is removed now; 'npm run demo -- --no-editor --keep' keeps it to try the CLI.`);

if (!noEditor) {
  // The demo's trust decisions live beside it (as the CLI part's do), not in your own state; the editor gets the same XDG_STATE_HOME.
  const state = join(base, 'state');
  const work = prepareSchedulerDemo(demo, state, pace);
  console.log(
    `Stand-in agents are configured in ${demo.root}/.springfield/config.json and allowed with 'springfield allow' in the demo's own state ${state}`,
  );
  console.log(`(each waits ${pace} s before each command; --pace to change).`);
  console.log(
    `  ${work.orders} "Order history" and ${work.wishlist} "Wishlist" have approved plans; ${work.refunds} "Refunds" too, and it is critical: you review it, not Bart; ${work.giftCards} "Gift cards" has no plan yet.\n`,
  );
  ensureAptPackages(DEMO_PACKAGES);
  await ensureCodeServer();
  // As a user has it: the extension installed (linked into code-server's extensions folder), no test
  // driver, so its notifications show.
  const server = await startCodeServer({
    folder: demo.root,
    installedExtensionPath: projectRoot,
    env: { XDG_STATE_HOME: state },
  });
  console.log(`VS Code (code-server) with Springfield on the demo repository:\n\n  ${server.url}\n`);
  console.log(
    'Open it in a browser: the Springfield icon in the activity bar shows the epics; the plan for "Search" waits for approval;',
  );
  console.log('src/greeting.ts carries a review signal waiting for you.');
  console.log(
    'Press Start scheduler (▷▷ in the Agents view\'s title): Ralph builds "Order history" and "Wishlist" in parallel terminals, each',
  );
  console.log(
    'build is verified, Bart reviews and the scheduler merges; "Refunds" waits in Needs you for your Review changes; Lisa plans "Gift cards"',
  );
  console.log('and asks for your approval. Press Ctrl+C to stop.');
  onSignal = () =>
    void server.stop().then(() => {
      process.stdout.write(keep ? `The demo repository stays in ${base}\n` : 'Removed the demo repository.\n');
      process.exit(0);
    });
  await new Promise(() => undefined);
}
