// The VSIXes as the Marketplace and Open VSX take them: `npm run package` (scripts/package.ts, no
// bypass flags) builds the universal one and one per platform, once for this file. Unpacked, the
// universal one's manifest has the gallery fields, the icon and every image the README links are
// inside, the README's images are HTTPS (vsce rewrites the relative ones against the repository),
// the demo agents ship, and no dev-only file does; each platform's carries the same files but only
// its own better-sqlite3 build, and its manifest names its platform. The release script's dry run
// checks them and prints the publishing commands. test/integration/ui.test.ts installs this
// machine's platform package into code-server.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, cpSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { cleanEnv } from '../../scripts/codeServer.ts';
import { platformVsix, VSIX_TARGETS } from '../../scripts/vsixTargets.ts';
import { ensureCli, PROJECT_ROOT } from '../helpers/gitRepo.ts';

ensureCli();

const work = mkdtempSync(join(tmpdir(), 'sf-vsix-contents-'));
const universal = join(work, 'springfield.vsix');
const PREBUILDS = 'extension/node_modules/better-sqlite3/prebuilds/';

before(
  () => {
    execFileSync(process.execPath, [join(PROJECT_ROOT, 'scripts', 'package.ts'), '--out', work], {
      cwd: PROJECT_ROOT,
      stdio: 'pipe',
    });
  },
  { timeout: 1_200_000 },
);
after(() => rmSync(work, { recursive: true, force: true }));

const entriesOf = (vsix: string): string[] =>
  execFileSync('zipinfo', ['-1', vsix], { encoding: 'utf8' }).trim().split('\n');
const readIn = (vsix: string, entry: string): Buffer =>
  execFileSync('unzip', ['-p', vsix, entry], { maxBuffer: 64 * 1024 * 1024 });

/** VS Code's own list of extension categories (the Marketplace's); vsce 3.9 does not check them. */
const CATEGORIES = [
  'AI',
  'Azure',
  'Chat',
  'Data Science',
  'Debuggers',
  'Extension Packs',
  'Education',
  'Formatters',
  'Keymaps',
  'Language Packs',
  'Linters',
  'Machine Learning',
  'Notebooks',
  'Programming Languages',
  'SCM Providers',
  'Snippets',
  'Testing',
  'Themes',
  'Visualization',
  'Other',
];

/** What may ship: the manifest, the docs vsce renames, the bundles, the media the extension shows, better-sqlite3's run-time files. */
const SHIPS = [
  /^extension\.vsixmanifest$/,
  /^\[Content_Types\]\.xml$/,
  /^extension\/(package\.json|readme\.md|changelog\.md|LICENSE\.txt)$/,
  /^extension\/dist\/(cli|springfield|postgres|extension|standInAgent)\.cjs$/,
  /^extension\/dist\/full\/(main|chunks\/[\w-]+)\.js$/,
  /^extension\/media\/(icon\.png|screenshot-[\w-]+\.png|springfield\.svg)$/,
  /^extension\/media\/dist\/(dashboard|approval)\.(js|css)$/,
  /^extension\/media\/walkthrough\/\w+\.md$/,
  /^extension\/node_modules\/better-sqlite3\/(package\.json|lib\/[\w/-]+\.js|prebuilds\/[\w-]+\.node)$/,
];

/** The targets of a markdown text's links and images (`[t](target)`, `![t](target)`, `<img src>`). */
function links(markdown: string): { images: string[]; links: string[] } {
  const images: string[] = [];
  const others: string[] = [];
  for (const m of markdown.matchAll(/(!?)\[(?:[^\][]|\[[^\]]*\])*\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g))
    (m[1] ? images : others).push(m[2] ?? '');
  for (const m of markdown.matchAll(/<img[^>]+src=["']([^"']+)["']/g)) images.push(m[1] ?? '');
  return { images, links: others };
}

const relative = (target: string): boolean => !/^[a-z]+:/i.test(target) && !target.startsWith('#');

test(
  'the VSIX carries the gallery fields, the icon, the README with its images and nothing of development',
  { timeout: 180_000 },
  () => {
    const root = JSON.parse(readFileSync(join(PROJECT_ROOT, 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
    };
    const bypass = /--allow-missing-repository|--skip-license|--base(Images|Content)Url/;
    assert.doesNotMatch(root.scripts.package ?? '', bypass, 'npm run package packages with no bypass');
    assert.doesNotMatch(readFileSync(join(PROJECT_ROOT, 'scripts', 'package.ts'), 'utf8'), bypass);
    const vsix = universal;
    const entries = entriesOf(vsix);
    const read = (entry: string): Buffer => readIn(vsix, entry);

    // Nothing of development ships: sources, tests, scripts, docs, maps, test results, the icon's source.
    const strays = entries.filter((e) => !SHIPS.some((re) => re.test(e)));
    assert.deepEqual(strays, [], `files that should not ship: ${strays.join(', ')}`);
    for (const platform of ['linux-x64', 'linux-arm64', 'darwin-arm64', 'darwin-x64', 'win32-x64'])
      assert.ok(entries.includes(`extension/node_modules/better-sqlite3/prebuilds/${platform}.node`), platform);
    for (const bundle of ['extension.cjs', 'cli.cjs', 'springfield.cjs', 'standInAgent.cjs'])
      assert.ok(entries.includes(`extension/dist/${bundle}`), bundle);

    // The manifest's gallery fields.
    const manifest = JSON.parse(read('extension/package.json').toString('utf8')) as Record<string, unknown> & {
      icon: string;
      galleryBanner: { color: string; theme: string };
      categories: string[];
      keywords: string[];
      repository: { url: string };
      bugs: { url: string };
      homepage: string;
      extensionKind: string[];
      license: string;
    };
    assert.equal(manifest.icon, 'media/icon.png');
    const icon = read(`extension/${manifest.icon}`);
    assert.equal(icon.subarray(1, 4).toString('latin1'), 'PNG', 'a PNG (the Marketplace refuses an SVG icon)');
    assert.deepEqual([icon.readUInt32BE(16), icon.readUInt32BE(20)], [128, 128], 'at least 128×128');
    assert.match(manifest.galleryBanner.color, /^#[0-9A-F]{6}$/i);
    assert.ok(['dark', 'light'].includes(manifest.galleryBanner.theme));
    assert.deepEqual(
      manifest.categories.filter((c) => !CATEGORIES.includes(c)),
      [],
      'categories VS Code knows',
    );
    assert.ok(manifest.categories.includes('AI'));
    assert.ok(manifest.keywords.length > 0 && manifest.keywords.length <= 30, 'the Marketplace keeps 30 tags at most');
    for (const url of [manifest.repository.url, manifest.bugs.url, manifest.homepage]) assert.match(url, /^https:\/\//);
    assert.deepEqual(manifest.extensionKind, ['workspace'], 'it runs agents and git where the repository is');
    assert.equal(manifest.license, 'MIT');
    const vsixManifest = read('extension.vsixmanifest').toString('utf8');
    assert.match(vsixManifest, /<Icon>extension\/media\/icon\.png<\/Icon>/);
    assert.match(vsixManifest, /<License>extension\/LICENSE\.txt<\/License>/);
    assert.match(
      read('extension/changelog.md').toString('utf8'),
      new RegExp(`^## ${String(manifest.version).replace(/\./g, '\\.')}$`, 'm'),
      'the changelog has this version',
    );

    // The README: every image and relative link it has exists; in the VSIX its images are HTTPS URLs of files that ship.
    const readme = readFileSync(join(PROJECT_ROOT, 'README.md'), 'utf8');
    const source = links(readme);
    assert.ok(source.images.length > 0, 'the README shows a picture');
    for (const target of [...source.images, ...source.links].filter(relative)) {
      assert.ok(
        existsSync(join(PROJECT_ROOT, target.split('#')[0] ?? '')),
        `README.md links ${target}, which does not exist`,
      );
    }
    for (const image of source.images.filter(relative))
      assert.ok(entries.includes(`extension/${image}`), `${image} ships in the VSIX`);
    const shipped = links(read('extension/readme.md').toString('utf8'));
    const repo = manifest.repository.url.replace(/\.git$/, '');
    for (const image of shipped.images) {
      assert.match(image, /^https:\/\//, `the Marketplace shows HTTPS images only: ${image}`);
      const file = image.startsWith(`${repo}/raw/HEAD/`) ? image.slice(`${repo}/raw/HEAD/`.length) : undefined;
      assert.ok(file && entries.includes(`extension/${file}`), `${image} is a file of this repository that ships`);
    }
  },
);

/** The attributes of a VSIX manifest's `<Identity …/>`. */
function identityOf(vsix: string): Record<string, string> {
  const manifest = readIn(vsix, 'extension.vsixmanifest').toString('utf8');
  const element = /<Identity\b([^>]*)>/.exec(manifest)?.[1] ?? '';
  return Object.fromEntries([...element.matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
}

test('each platform VSIX carries the universal one’s files with its own better-sqlite3 build alone', () => {
  const shared = entriesOf(universal).filter((e) => !e.startsWith(PREBUILDS));
  const version = (JSON.parse(readFileSync(join(PROJECT_ROOT, 'package.json'), 'utf8')) as { version: string }).version;
  assert.equal(identityOf(universal).TargetPlatform, undefined, 'the universal one names no platform');
  assert.equal(
    entriesOf(universal).filter((e) => e.startsWith(PREBUILDS)).length,
    VSIX_TARGETS.length,
    'the universal one carries every build',
  );
  for (const { target, prebuild } of VSIX_TARGETS) {
    const vsix = platformVsix(work, target);
    assert.ok(existsSync(vsix), `${target}: ${vsix}`);
    assert.deepEqual(
      entriesOf(vsix).sort(),
      [...shared, `${PREBUILDS}${prebuild}.node`].sort(),
      `${target}: the shared files and ${prebuild}.node, nothing else`,
    );
    assert.deepEqual(
      readIn(vsix, `${PREBUILDS}${prebuild}.node`),
      readFileSync(join(PROJECT_ROOT, 'node_modules', 'better-sqlite3', 'prebuilds', `${prebuild}.node`)),
      `${target}: better-sqlite3's own ${prebuild} build`,
    );
    assert.deepEqual(readIn(vsix, 'extension/dist/extension.cjs'), readIn(universal, 'extension/dist/extension.cjs'));
    const identity = identityOf(vsix);
    assert.equal(identity.TargetPlatform, target, `${target}: its manifest's TargetPlatform`);
    assert.deepEqual([identity.Id, identity.Publisher, identity.Version], ['springfield', 'springfield', version]);
  }
});

test('the linux-x64 VSIX is at most a third of the universal one', () => {
  const platform = statSync(platformVsix(work, 'linux-x64')).size;
  const all = statSync(universal).size;
  assert.ok(platform * 3 <= all, `linux-x64 ${platform} bytes, universal ${all} bytes`);
});

test('npm run package refuses a target it does not build in one line, writing nothing', () => {
  const out = join(work, 'refused');
  for (const args of [
    ['--target', 'linux-armhf'],
    ['--targets', 'linux-x64'],
  ]) {
    const r = spawnSync(process.execPath, [join(PROJECT_ROOT, 'scripts', 'package.ts'), '--out', out, ...args], {
      cwd: PROJECT_ROOT,
      encoding: 'utf8',
    });
    assert.equal(r.status, 2, r.stderr);
    assert.match(r.stderr, /^package: .*(linux-armhf|--targets).*\n$/);
    assert.equal(existsSync(out), false, 'nothing written');
  }
});

/** Runs the release script with the environment given (no token unless given). */
function release(
  args: string[],
  env: NodeJS.ProcessEnv = {},
): { status: number | null; stdout: string; stderr: string } {
  const base = cleanEnv();
  delete base.VSCE_PAT;
  delete base.OVSX_PAT;
  return spawnSync(process.execPath, [join(PROJECT_ROOT, 'scripts', 'release.ts'), ...args], {
    cwd: PROJECT_ROOT,
    encoding: 'utf8',
    env: { ...base, ...env },
  });
}

test('the release refuses without its tokens in one line, running nothing', () => {
  const none = release(['--from', work]);
  assert.equal(none.status, 2);
  assert.equal(none.stdout, '');
  assert.match(none.stderr, /^release: VSCE_PAT and OVSX_PAT are not set .*nothing was published.*\n$/);
  const one = release(['--from', work], { VSCE_PAT: 'x' });
  assert.equal(one.status, 2);
  assert.match(one.stderr, /^release: OVSX_PAT is not set .*\n$/);
});

test('the release dry run checks each package and prints the commands that would publish it', () => {
  const r = release(['--dry-run', '--from', work], { VSCE_PAT: 'marketplace-secret', OVSX_PAT: 'openvsx-secret' });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stderr, '');
  assert.doesNotMatch(r.stdout, /secret/, 'tokens stay in the environment');
  const lines = r.stdout.trim().split('\n');
  assert.equal(lines.length, 2 * VSIX_TARGETS.length);
  const vsce = join(PROJECT_ROOT, 'node_modules', '@vscode', 'vsce', 'vsce');
  VSIX_TARGETS.forEach(({ target }, i) => {
    const file = platformVsix(work, target);
    assert.ok(lines[i]?.endsWith(`${vsce} publish --packagePath ${file}`), lines[i]);
    assert.match(lines[VSIX_TARGETS.length + i] ?? '', /npx-cli\.js --yes ovsx@\d+\.\d+\.\d+ publish --packagePath /);
    assert.ok(lines[VSIX_TARGETS.length + i]?.endsWith(` ${file}`), lines[VSIX_TARGETS.length + i]);
  });
  assert.ok(!r.stdout.includes('springfield.vsix'), 'the universal package is not published');
});

test('the release refuses a package that is missing or not its platform’s, before any command', () => {
  const from = join(work, 'damaged');
  cpSync(join(work, 'dist-vsix'), join(from, 'dist-vsix'), { recursive: true });
  copyFileSync(platformVsix(work, 'linux-x64'), platformVsix(from, 'darwin-x64'));
  rmSync(platformVsix(from, 'win32-arm64'));
  for (const env of [{}, { VSCE_PAT: 'x', OVSX_PAT: 'y' }]) {
    const r = release(env.VSCE_PAT ? ['--from', from] : ['--dry-run', '--from', from], env);
    assert.equal(r.status, 1);
    assert.equal(r.stdout, '', 'no command printed or run');
    const darwin = platformVsix(from, 'darwin-x64');
    assert.deepEqual(r.stderr.trim().split('\n'), [
      `release: ${darwin}: its manifest's TargetPlatform is linux-x64, not darwin-x64`,
      `release: ${darwin}: carries better-sqlite3 builds [linux-x64], not [darwin-x64]`,
      `release: ${platformVsix(from, 'win32-arm64')} does not exist (npm run package makes it)`,
      'release: nothing was published',
    ]);
  }
});
