// The VSIX as the Marketplace and Open VSX take it: `vsce package` (as `npm run package` runs it, no
// bypass flags) builds it from the repository; unpacked, its manifest has the gallery fields, the
// icon and every image the README links are inside, the README's images are HTTPS (vsce rewrites the
// relative ones against the repository), the demo agents ship, and no dev-only file does.
// test/integration/vsix.test.ts installs the same package into code-server.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { ensureCli, PROJECT_ROOT } from '../helpers/gitRepo.ts';

ensureCli();

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
  (t) => {
    const work = mkdtempSync(join(tmpdir(), 'sf-vsix-contents-'));
    t.after(() => rmSync(work, { recursive: true, force: true }));
    const root = JSON.parse(readFileSync(join(PROJECT_ROOT, 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
    };
    assert.doesNotMatch(
      root.scripts.package ?? '',
      /--allow-missing-repository|--skip-license|--base(Images|Content)Url/,
      'npm run package packages with no bypass',
    );
    const vsix = join(work, 'springfield.vsix');
    execFileSync(
      process.execPath,
      [join(PROJECT_ROOT, 'node_modules', '@vscode', 'vsce', 'vsce'), 'package', '-o', vsix],
      { cwd: PROJECT_ROOT, stdio: 'pipe' },
    );
    const entries = execFileSync('zipinfo', ['-1', vsix], { encoding: 'utf8' }).trim().split('\n');
    const read = (entry: string): Buffer => execFileSync('unzip', ['-p', vsix, entry], { maxBuffer: 64 * 1024 * 1024 });

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
