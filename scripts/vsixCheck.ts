// What a built VSIX must be before it ships: its manifest (extension.vsixmanifest) names this
// extension, this version and the platform it is for (the Marketplace and Open VSX file a package
// under the TargetPlatform its manifest names), and it carries that platform's better-sqlite3 build
// and no other (the universal one: all of them).
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PREBUILDS_DIR, VSIX_TARGETS } from './vsixTargets.ts';
import { Vsix } from './vsixZip.ts';
import { messageOf } from '../src/shared/errorMessage.ts';

export interface Identity {
  publisher: string;
  name: string;
  version: string;
}

/** The identity package.json gives every package. */
export function expectedIdentity(root: string): Identity {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as Identity;
  return { publisher: pkg.publisher, name: pkg.name, version: pkg.version };
}

/** The attributes of the manifest's `<Identity …/>` element. */
export function manifestIdentity(manifest: string): Record<string, string> {
  const element = /<Identity\b([^>]*)>/.exec(manifest)?.[1] ?? '';
  return Object.fromEntries([...element.matchAll(/([\w:]+)="([^"]*)"/g)].map((m) => [m[1] ?? '', m[2] ?? '']));
}

/** The better-sqlite3 builds a VSIX carries, by better-sqlite3's platform names. */
export function prebuildsIn(names: readonly string[]): string[] {
  const prefix = `extension/${PREBUILDS_DIR}/`;
  return names
    .filter((n) => n.startsWith(prefix) && n.endsWith('.node'))
    .map((n) => n.slice(prefix.length, -'.node'.length))
    .sort();
}

/** What is wrong with the package at `file` for `target` (undefined: the universal one), one line each. */
export function checkVsix(file: string, target: string | undefined, identity: Identity): string[] {
  if (!existsSync(file)) return [`${file} does not exist (npm run package makes it)`];
  let vsix: Vsix;
  let attributes: Record<string, string>;
  try {
    vsix = new Vsix(file);
    attributes = manifestIdentity(vsix.read('extension.vsixmanifest').toString('utf8'));
  } catch (err) {
    return [`${file}: ${messageOf(err)}`];
  }
  const problems: string[] = [];
  const expect = (what: string, found: string | undefined, wanted: string | undefined): void => {
    if (found !== wanted)
      problems.push(`${file}: its manifest's ${what} is ${found ?? 'absent'}, not ${wanted ?? 'absent'}`);
  };
  expect('Id', attributes.Id, identity.name);
  expect('Publisher', attributes.Publisher, identity.publisher);
  expect('Version', attributes.Version, identity.version);
  expect('TargetPlatform', attributes.TargetPlatform, target);
  const wanted = VSIX_TARGETS.filter((t) => target === undefined || t.target === target)
    .map((t) => t.prebuild)
    .sort();
  const found = prebuildsIn(vsix.names());
  if (found.join() !== wanted.join())
    problems.push(`${file}: carries better-sqlite3 builds [${found.join(', ')}], not [${wanted.join(', ')}]`);
  return problems;
}
