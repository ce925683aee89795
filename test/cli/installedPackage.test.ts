// The CLI as users install it: the npm package (`npm run pack:cli`, scripts/packCli.ts) installed
// with `npm install -g` into a fresh prefix, then `springfield` found on PATH in a fresh repository:
// --version, init, claim, `springfield mcp` driven by the MCP SDK's client, and the demo agents it
// ships taking an epic to a proposed plan under `orchestrate`; `npx` runs the
// tarball too; and an old Node running the installed command gets one line and exit 3.
// npm uses a cache of its own (.cache/npm): the first run fetches better-sqlite3 from the registry,
// later runs install offline.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { cleanEnv as npmEnv, npmCli } from '../../scripts/codeServer.ts';
import { CLI_PACKAGE, packCli } from '../../scripts/packCli.ts';
import { cleanEnv, ensureCli, makeRepo, PROJECT_ROOT } from '../helpers/gitRepo.ts';

ensureCli();

const PLAN = `# Plan: Greeting

## Step 1: Greeting module {#step-1}
**Tasks:**
- [ ] Add src/greeting.ts
**Tests:**
- [ ] Test it

## Step 2: Farewell module {#step-2}
**Tasks:**
- [ ] Add src/farewell.ts
`;

const OLD_NODE = '/usr/bin/node';
const TOO_OLD =
  /^springfield: Springfield needs Node\.js >= 22\.14 \(Node-API 10\); this is Node\.js v[\d.]+ with Node-API \d+\n$/;

/** A runtime without Node-API 10 on this machine (Debian's Node 20 here), or undefined. */
function oldNode(): string | undefined {
  if (!existsSync(OLD_NODE)) return undefined;
  const napi = Number(execFileSync(OLD_NODE, ['-p', 'process.versions.napi'], { encoding: 'utf8' }).trim());
  return napi < 10 ? OLD_NODE : undefined;
}

function text(r: unknown): string {
  return ((r as CallToolResult).content ?? []).map((c) => (c.type === 'text' ? c.text : '')).join('\n');
}

test(
  'the npm package installs with npm install -g and its springfield command works from PATH',
  { timeout: 600_000 },
  async (t) => {
    const started = Date.now();
    const work = realpathSync(mkdtempSync(join(tmpdir(), 'sf-installed-')));
    t.after(() => rmSync(work, { recursive: true, force: true }));
    const cache = join(PROJECT_ROOT, '.cache', 'npm');
    mkdirSync(cache, { recursive: true });

    // The tarball holds what the CLI runs and nothing of the extension's.
    const packed = packCli(join(work, 'out'));
    assert.match(packed.tarball, /springfield-agents-cli-\d+\.\d+\.\d+\.tgz$/);
    assert.deepEqual(
      packed.files.filter((f) => !f.startsWith('dist/full/')),
      [
        'LICENSE',
        'README.md',
        'dist/cli.cjs',
        'dist/postgres.cjs',
        'dist/springfield.cjs',
        'dist/standInAgent.cjs',
        'package.json',
      ],
    );
    assert.ok(packed.files.includes('dist/full/main.js'));
    assert.ok(
      packed.files.every((f) => !/extension|media\/|src\/|\.ts$|\.map$/.test(f)),
      `only the CLI: ${packed.files.join(', ')}`,
    );
    const manifest = JSON.parse(
      execFileSync('tar', ['xzOf', packed.tarball, 'package/package.json'], { encoding: 'utf8' }),
    ) as Record<string, unknown>;
    const root = JSON.parse(readFileSync(join(PROJECT_ROOT, 'package.json'), 'utf8')) as {
      version: string;
      dependencies: Record<string, string>;
    };
    assert.equal(manifest.name, CLI_PACKAGE);
    assert.equal(manifest.version, root.version);
    assert.equal(manifest.private, undefined, 'publishable');
    assert.deepEqual(manifest.bin, { springfield: 'dist/cli.cjs' });
    assert.deepEqual(manifest.engines, { node: '>=22.14' });
    assert.match(String(manifest.description), / Needs Node\.js 22\.14 or later\.$/);
    assert.deepEqual(manifest.dependencies, { 'better-sqlite3': root.dependencies['better-sqlite3'] });
    t.diagnostic(`tarball ${(packed.size / 1024).toFixed(0)} KiB, ${packed.files.length} files`);

    // npm install -g into a fresh prefix, with this project's Node 24 and npm.
    const node = process.execPath;
    const prefix = join(work, 'prefix');
    const npm = (args: string[], cwd: string) =>
      execFileSync(node, [npmCli(), ...args, '--cache', cache, '--prefer-offline', '--no-audit', '--no-fund'], {
        cwd,
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'pipe'],
        env: npmEnv({ PATH: `${dirname(node)}:/usr/bin:/bin`, npm_config_update_notifier: 'false' }),
      });
    const installStarted = Date.now();
    npm(['install', '--global', '--prefix', prefix, packed.tarball], work);
    t.diagnostic(`npm install -g took ${Date.now() - installStarted} ms`);
    const bin = join(prefix, 'bin', 'springfield');
    assert.ok(lstatSync(bin).isSymbolicLink(), 'npm linked the command into the prefix');

    // A PATH as a user's: the prefix's bin, a Node 24 named `node`, git.
    const nodeDir = join(work, 'node-bin');
    mkdirSync(nodeDir);
    symlinkSync(node, join(nodeDir, 'node'));
    const env = cleanEnv({ PATH: `${join(prefix, 'bin')}:${nodeDir}:/usr/bin:/bin` });
    for (const key of Object.keys(env)) if (key.toLowerCase().startsWith('npm_')) delete env[key];
    const repo = makeRepo({ files: { '.gitignore': '.springfield/\n', 'plans/greeting.md': PLAN } });
    t.after(() => repo.cleanup());
    const sf = (args: string[], options: { env?: NodeJS.ProcessEnv } = {}) =>
      spawnSync('springfield', args, { cwd: repo.root, encoding: 'utf8', env: options.env ?? env });

    const version = sf(['--version']);
    assert.equal(version.status, 0, version.stderr);
    assert.equal(version.stdout.trim(), root.version);
    const init = sf(['init', 'plans/greeting.md', '--json']);
    assert.equal(init.status, 0, init.stderr);
    const claim = sf(['claim', 'plans/greeting.md', '--json']);
    assert.equal(claim.status, 0, claim.stderr);
    assert.equal((JSON.parse(claim.stdout) as { claimed: boolean; step_anchor: string }).step_anchor, 'step-1');

    // springfield mcp, started by name from PATH as an MCP client configured with `springfield mcp` does.
    const transport = new StdioClientTransport({
      command: 'springfield',
      args: ['mcp'],
      cwd: repo.root,
      env: env as Record<string, string>,
      stderr: 'pipe',
    });
    const client = new Client({ name: 'springfield-installed-test', version: '1.0.0' });
    await client.connect(transport);
    try {
      const { tools } = await client.listTools();
      assert.ok(
        tools.some((x) => x.name === 'springfield_update_items'),
        tools.map((x) => x.name).join(', '),
      );
      const updated = await client.callTool({
        name: 'springfield_update_items',
        arguments: { plan: 'plans/greeting.md', step: 'step-1', all: 'completed' },
      });
      assert.equal(updated.isError, undefined, text(updated));
      assert.match(text(updated), /Updated 2 items of step-1/);
    } finally {
      await client.close();
    }
    const shown = JSON.parse(sf(['show', 'plans/greeting.md', '--json']).stdout) as {
      plans: { steps: { anchor: string; items: { status: string }[] }[] }[];
    };
    assert.deepEqual(
      shown.plans[0]?.steps[0]?.items.map((i) => i.status),
      ['completed', 'completed'],
      'the MCP server wrote through the installed CLI',
    );

    // The demo agents installed with it: `agents use demo` names the package's own stand-in, run by the
    // Node that runs the command, and the scheduler takes a new epic to a plan waiting for approval.
    const used = sf(['agents', 'use', 'demo', '--json']);
    assert.equal(used.status, 0, used.stderr);
    const installed = join(prefix, 'lib', 'node_modules', ...CLI_PACKAGE.split('/'), 'dist', 'standInAgent.cjs');
    assert.deepEqual((JSON.parse(used.stdout) as { roles: Record<string, string[]> }).roles.lisa, [
      realpathSync(node),
      installed,
      '$SPRINGFIELD_CONTEXT_FILE',
    ]);
    const epic = (JSON.parse(sf(['epic', 'create', 'Greeting command', '--json']).stdout) as { id: string }).id;
    const orchestrated = sf(['orchestrate', '--watch', '--until-idle', '--interval', '1']);
    assert.equal(orchestrated.status, 0, orchestrated.stderr);
    const versions = (JSON.parse(sf(['plan', 'show', epic, '--json']).stdout) as { versions: { status: string }[] })
      .versions;
    assert.deepEqual(
      versions.map((v) => v.status),
      ['proposed'],
      orchestrated.stdout + orchestrated.stderr,
    );

    // npx runs the tarball too (a path that exists is taken for a command, so the spec says file:), with
    // better-sqlite3 hoisted beside the package rather than inside it.
    const npxDir = join(cache, '_npx');
    const before = new Set(existsSync(npxDir) ? readdirSync(npxDir) : []);
    t.after(() => {
      for (const entry of existsSync(npxDir) ? readdirSync(npxDir) : [])
        if (!before.has(entry)) rmSync(join(npxDir, entry), { recursive: true, force: true });
    });
    const npx = (args: string[]) =>
      execFileSync(
        node,
        [
          join(dirname(npmCli()), 'npx-cli.js'),
          '--yes',
          '--cache',
          cache,
          '--prefer-offline',
          `file:${packed.tarball}`,
          ...args,
        ],
        {
          cwd: repo.root,
          encoding: 'utf8',
          stdio: ['ignore', 'pipe', 'pipe'],
          env: { ...env, PATH: `${nodeDir}:/usr/bin:/bin`, npm_config_update_notifier: 'false' },
        },
      );
    assert.equal(npx(['--version']).trim(), root.version);
    assert.match(npx(['ready', 'plans/greeting.md']), /step-2/, 'a command that opens the store runs from npx');

    // An old Node running the installed command, directly or as the first `node` on PATH: one line, exit 3.
    const old = oldNode();
    if (old === undefined) {
      t.diagnostic(`no runtime without Node-API 10 at ${OLD_NODE}: the refusal is not checked here`);
    } else {
      const direct = spawnSync(old, [bin, '--version'], { cwd: repo.root, encoding: 'utf8', env });
      assert.equal(direct.status, 3);
      assert.equal(direct.stdout, '');
      assert.match(direct.stderr, TOO_OLD);
      const oldFirst = { ...env, PATH: `${join(prefix, 'bin')}:${dirname(old)}:/bin` };
      for (const args of [['mcp'], ['init', 'plans/greeting.md'], ['claim', 'plans/greeting.md'], ['--help']]) {
        const r = sf(args, { env: oldFirst });
        assert.equal(r.status, 3, `${args.join(' ')}: ${r.stderr}`);
        assert.equal(r.stdout, '', args.join(' '));
        assert.match(r.stderr, TOO_OLD, args.join(' '));
      }
    }
    t.diagnostic(`installed-package test took ${Date.now() - started} ms`);
  },
);
