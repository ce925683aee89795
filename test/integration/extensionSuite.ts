// What suite/extension.suite.ts runs against, for both of its hosts: code-server
// (extensionHost.test.ts, part of npm test) and desktop VS Code (test/electron/run.ts).
import { realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildDemoRepo, CLI, sf } from '../../scripts/demoRepo.ts';
import { bundleSuite } from './harness.ts';
import { sfHere } from './person.ts';

const LOOSE_PLAN = 'plans/notes.md';
const NOTES = `# Plan: Release notes

## Step 1: Draft notes {#step-1}
**Tasks:**
- [ ] List changes
- [ ] Thank contributors

## Step 2: Publish {#step-2}
**Depends on:** #step-1
**Tasks:**
- [ ] Post it
`;

/**
 * The demo repository under `base` plus one loose plan, so that exactly one plan has a ready step,
 * and the suite bundled with its fixture: the workspace to open and the suite to run there.
 */
export async function prepareExtensionSuite(base: string): Promise<{ workspace: string; suitePath: string }> {
  const demo = buildDemoRepo(base, sfHere);
  writeFileSync(join(demo.root, LOOSE_PLAN), NOTES);
  sf(demo.root, ['init', LOOSE_PLAN], { SPRINGFIELD_AGENT: '' });
  const fixture = {
    node: realpathSync(process.execPath),
    cli: CLI,
    root: demo.root,
    epicWorktrees: demo.epicWorktrees,
    epics: demo.epics,
    loosePlan: LOOSE_PLAN,
  };
  return { workspace: demo.root, suitePath: await bundleSuite('extension', fixture, base) };
}
