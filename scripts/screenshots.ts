// The README's pictures are taken by the real-editor tests (docs/development.md, "The README's
// pictures"): `npm run screenshots` runs the tests that take them, in code-server, then copies each
// into media/. `--copy` only copies what the last run of those tests left in test-results/.
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, statSync } from 'node:fs';
import { join } from 'node:path';

export interface Picture {
  /** Its name under media/, linked from the README. */
  readonly file: string;
  /** The screenshot under test-results/ it is copied from. */
  readonly from: string;
  /** The real-editor test that takes it. */
  readonly test: string;
}

export const PICTURES: readonly Picture[] = [
  {
    file: 'screenshot-scheduler.png',
    from: 'demo-scheduler-parallel.png',
    test: 'test/integration/demoWalk.test.ts',
  },
  {
    file: 'screenshot-dashboard.png',
    from: 'demo-scheduler-dashboard.png',
    test: 'test/integration/demoWalk.test.ts',
  },
  { file: 'screenshot-approval.png', from: 'ui-approve-plan.png', test: 'test/integration/ui.test.ts' },
  {
    file: 'screenshot-agent.png',
    from: 'real-agent-editor-done.png',
    test: 'test/integration/realAgentEditor.test.ts',
  },
];

const root = join(import.meta.dirname, '..');

function main(): number {
  if (!process.argv.includes('--copy')) {
    const tests = [...new Set(PICTURES.map((p) => p.test))];
    console.log(`screenshots: running ${tests.join(', ')} in code-server`);
    const r = spawnSync(process.execPath, ['--test', '--test-concurrency=1', ...tests], {
      cwd: root,
      stdio: 'inherit',
    });
    if (r.status !== 0) {
      console.error('screenshots: a test failed; media/ is left as it was');
      return 1;
    }
  }
  for (const p of PICTURES) {
    const from = join(root, 'test-results', p.from);
    if (!existsSync(from) || statSync(from).size < 10_000) {
      console.error(`screenshots: ${from} is missing; run ${p.test} first (or npm run screenshots without --copy)`);
      return 1;
    }
    copyFileSync(from, join(root, 'media', p.file));
    console.log(`screenshots: media/${p.file} ← test-results/${p.from}`);
  }
  return 0;
}

if (import.meta.main) process.exitCode = main();
