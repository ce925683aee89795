// Nothing a repository brings runs until the user allowed it: a cloned "evil" repository (its
// .springfield/config.json and even a state.db with an approved epic committed) runs nothing; doctor
// names the tracked state and its fix works; allowing runs it; a changed config asks again.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import {
  chownSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { TrustStatus } from '../../src/core/trust/trust.ts';
import { assertFails, assertOk, cleanEnv, testStateHome, type CliResult } from '../helpers/gitRepo.ts';
import { runCli, runJson } from '../helpers/cliInProcess.ts';

const PLAN = '# Plan: Harmless\n\n## Step 1: Do it {#step-1}\n- [ ] it\n';

let base: string;
let marker: string;
let victim: string;
let epic: string;

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', args, { cwd, encoding: 'utf8', env: cleanEnv(), stdio: ['ignore', 'pipe', 'pipe'] }).trim();
const sf = async (args: string[], env: Record<string, string | undefined> = {}): Promise<CliResult> =>
  await runJson(victim, args, env);
/** One scheduler pass (its progress lines go to stderr); exit 0. */
async function orchestrateOnce(): Promise<void> {
  const r = await sf(['orchestrate', '--once']);
  assert.equal(r.code, 0, `orchestrate --once: exit ${r.code}\n${r.stdout}${r.stderr}`);
}
const marks = (): string[] => (existsSync(marker) ? readFileSync(marker, 'utf8').trim().split('\n') : []);

/** The command a role would run: leaves its name in the marker file, the proof that it ran. */
const leaves = (name: string) => [
  process.execPath,
  '-e',
  `require('fs').appendFileSync(${JSON.stringify(marker)}, ${JSON.stringify(`${name}\n`)})`,
];

before(async () => {
  base = realpathSync(mkdtempSync(join(tmpdir(), 'sf-trust-')));
  marker = join(base, 'marker');
  // The attacker's repository: a plan, an epic approved in a committed state.db, and a config naming commands.
  const origin = join(base, 'origin');
  mkdirSync(join(origin, 'plans'), { recursive: true });
  writeFileSync(join(origin, 'plans', 'p.md'), PLAN);
  git(origin, 'init', '-q', '-b', 'main');
  git(origin, 'config', 'user.email', 'evil@example.com');
  git(origin, 'config', 'user.name', 'Evil');
  git(origin, 'add', '-A');
  git(origin, 'commit', '-qm', 'plan');
  epic = assertOk<{ id: string }>(await runJson(origin, ['epic', 'create', 'Harmless'])).id;
  assertOk(await runJson(origin, ['plan', 'propose', epic, 'plans/p.md', '--agent', 'lisa']));
  assertOk(await runJson(origin, ['plan', 'approve', epic]));
  writeFileSync(
    join(origin, '.springfield', 'config.json'),
    JSON.stringify(
      { roles: { ralph: leaves('ralph'), bart: leaves('bart') }, verification: [leaves('verify')], leaseSeconds: 600 },
      null,
      2,
    ),
  );
  // handoffs/: approval's copy of the handoff, beside the database (docs/lifecycle.md).
  assert.deepEqual(
    readdirSync(join(origin, '.springfield')).sort(),
    ['config.json', 'handoffs', 'state.db'],
    'no writer left open',
  );
  git(origin, 'add', '-f', '.springfield/config.json', '.springfield/state.db');
  git(origin, 'commit', '-qm', 'add springfield state');
  // The victim clones it.
  victim = join(base, 'victim');
  git(base, 'clone', '-q', origin, victim);
  git(victim, 'config', 'user.email', 'me@example.com');
  git(victim, 'config', 'user.name', 'Me');
});
after(() => rmSync(base, { recursive: true, force: true }));

describe('a cloned repository with its own config and state', { concurrency: 1 }, () => {
  test('orchestrate --once and run refuse (exit 1, one line) and nothing runs', async () => {
    assert.equal(
      assertOk<{ status: string }>(await sf(['epic', 'show', epic])).status,
      'ready',
      'the committed state has an approved epic',
    );

    const orchestrate = assertFails(await sf(['orchestrate', '--once']), 1, 'state_tracked');
    const text = await runCli(victim, ['orchestrate', '--once']);
    const run = assertFails(
      await sf(['run', '--role', 'ralph', '--epic', epic, '--', ...leaves('by hand')]),
      1,
      'state_tracked',
    );

    assert.match(orchestrate.message, /^\.springfield\/state\.db is tracked by git.*git rm -r --cached \.springfield/);
    assert.match(text.stderr, /^springfield: \.springfield\/state\.db is tracked by git[^\n]*\n$/);
    assert.equal(run.code, 'state_tracked');
    assert.deepEqual(marks(), [], 'no command ran');
    assert.equal(assertOk<{ status: string }>(await sf(['epic', 'show', epic])).status, 'ready', 'nothing was started');
  });

  test('doctor reports the tracked .springfield/ and its fix works', async () => {
    const report = (await runCli(victim, ['doctor', '--json'])).json<{
      findings: { code: string; severity: string; message: string; command: string | null }[];
    }>();
    const finding = report.findings.find((f) => f.code === 'springfield_tracked');
    assert.ok(finding, JSON.stringify(report.findings));
    assert.equal(finding.severity, 'error');
    assert.match(finding.message, /\.springfield\/config\.json, \.springfield\/state\.db/);
    assert.ok(finding.command?.startsWith('git rm -r -q --cached -- .springfield'), finding.command ?? '');
    execFileSync('sh', ['-c', finding.command ?? 'false'], { cwd: victim, env: cleanEnv() });
    assert.equal(git(victim, 'ls-files', '.springfield'), '', 'untracked');
    assert.match(readFileSync(join(victim, '.gitignore'), 'utf8'), /^\.springfield\/$/m);
    assert.ok(existsSync(join(victim, '.springfield', 'state.db')), 'the files stay where they are');
    assert.equal(
      (await runCli(victim, ['doctor', '--json']))
        .json<{ findings: { code: string }[] }>()
        .findings.some((f) => f.code === 'springfield_tracked'),
      false,
    );
  });

  test('untracked, the config still runs nothing until allowed; the refusal names the command that allows it', async () => {
    const r = assertFails(await sf(['orchestrate', '--once']), 1, 'config_not_allowed');
    const run = assertFails(
      await sf(['run', '--role', 'ralph', '--epic', epic, '--', ...leaves('by hand')]),
      1,
      'config_not_allowed',
    );
    assert.equal(
      r.message,
      ".springfield/config.json has not been allowed on this machine, and nothing it names runs until you allow it: review and allow it with 'springfield allow'",
    );
    assert.equal(run.code, 'config_not_allowed');
    assert.deepEqual(marks(), []);
  });

  test('allow --show lists what it would run and records nothing', async () => {
    const shown = assertOk<TrustStatus & { recorded: boolean }>(await sf(['allow', '--show']));
    const text = await runCli(victim, ['allow', '--show']);
    assert.deepEqual([shown.state, shown.allowed, shown.recorded], ['new', false, false]);
    assert.deepEqual(
      shown.commands.map((c) => [c.key, c.argv]),
      [
        ['roles.ralph', leaves('ralph')],
        ['roles.bart', leaves('bart')],
        ['verification[0]', leaves('verify')],
      ],
    );
    assert.match(text.stdout, /^\S*config\.json \(sha256 [0-9a-f]{16}…\) would run:\n {2}roles\.ralph +\S+ -e /);
    assert.match(text.stdout, /Not allowed yet\. Allow it with 'springfield allow'\./);
    assert.equal(existsSync(shown.record_file), false);
    assertFails(await sf(['orchestrate', '--once']), 1, 'config_not_allowed');
  });

  test('allow records the content hash in the user state (0700, outside the repository); then the commands run', async () => {
    const allowed = assertOk<TrustStatus & { recorded: boolean; previously: string }>(await sf(['allow']));
    assert.deepEqual(
      [allowed.state, allowed.allowed, allowed.recorded, allowed.previously],
      ['allowed', true, true, 'new'],
    );
    assert.ok(allowed.record_file.startsWith(join(testStateHome(), 'springfield') + '/'), allowed.record_file);
    assert.equal(statSync(join(testStateHome(), 'springfield')).mode & 0o777, 0o700);
    assert.equal(statSync(allowed.record_file).mode & 0o777, 0o600);
    assert.ok(
      !readdirSync(join(testStateHome(), 'springfield')).some((f) => f.endsWith('.tmp')),
      'no temporary file left',
    );
    const record = JSON.parse(readFileSync(allowed.record_file, 'utf8')) as {
      repository: string;
      entries: { hash: string }[];
    };
    assert.equal(record.repository, realpathSync(join(victim, '.git')));
    assert.equal(record.entries[0]?.hash, allowed.hash);

    await orchestrateOnce();
    await orchestrateOnce();
    assert.deepEqual(marks(), ['ralph'], 'the allowed role command ran');
    assert.equal(assertOk<{ status: string }>(await sf(['epic', 'show', epic])).status, 'in_progress');
  });

  test('a changed config asks again; allowing the new content runs it; revoke withdraws it', async () => {
    const config = join(victim, '.springfield', 'config.json');
    writeFileSync(config, readFileSync(config, 'utf8').replace('"leaseSeconds": 600', '"leaseSeconds": 601'));

    const changed = assertFails(await sf(['orchestrate', '--once']), 1, 'config_not_allowed');
    assert.match(changed.message, /^\.springfield\/config\.json changed since you allowed it, .*'springfield allow'$/);
    assert.equal(assertOk<TrustStatus>(await sf(['allow', '--show'])).state, 'changed');
    assert.deepEqual(marks(), ['ralph']);

    assert.equal(assertOk<{ previously: string }>(await sf(['allow'])).previously, 'changed');
    await orchestrateOnce();

    const revoked = assertOk<{ revoked: boolean }>(await sf(['allow', '--revoke']));
    assert.equal(revoked.revoked, true);
    assertFails(await sf(['orchestrate', '--once']), 1, 'config_not_allowed');
  });

  test('the decision is keyed by the repository: a linked worktree sees it too', async () => {
    assertOk(await sf(['allow']));
    const wt = join(base, 'wt-linked');
    git(victim, 'worktree', 'add', '-q', '-b', 'linked', wt);
    assert.equal(assertOk<TrustStatus>(await runJson(wt, ['allow', '--show'])).state, 'allowed');
  });

  test('a logs folder planted as a link is refused before anything is claimed, and nothing is written through it', async () => {
    const logs = join(victim, '.springfield', 'logs');
    rmSync(logs, { recursive: true, force: true });
    const elsewhere = join(base, 'elsewhere');
    mkdirSync(elsewhere);
    symlinkSync(elsewhere, logs);
    const r = assertFails(await sf(['orchestrate', '--once']), 3, 'unsafe_directory');
    assert.match(r.message, /logs is a link; refusing to write through it/);
    assert.deepEqual(readdirSync(elsewhere), []);
    rmSync(logs);
  });
});

describe('a config written for the person by agents use', () => {
  test('counts as allowed when there was none (or it was allowed); it never allows the rest of an unreviewed file', async () => {
    const home = realpathSync(mkdtempSync(join(tmpdir(), 'sf-trust-agents-')));
    try {
      const repo = join(home, 'repo');
      git(home, 'init', '-q', '-b', 'main', repo);
      const env = { XDG_STATE_HOME: join(home, 'state'), PATH: '/usr/bin:/bin' };
      const fresh = await runJson(repo, ['agents', 'use', 'claude'], env);
      assert.equal(fresh.code, 0, fresh.stderr);
      assert.equal(fresh.json<{ allowed: boolean }>().allowed, true);
      assert.equal(
        assertOk<TrustStatus>(await runJson(repo, ['allow', '--show'], env)).state,
        'allowed',
        'the person chose these commands',
      );
      const again = await runJson(repo, ['agents', 'use', 'codex', '--role', 'bart'], env);
      assert.equal(
        again.json<{ allowed: boolean }>().allowed,
        true,
        'allowed before, the preset change keeps it allowed',
      );

      // Someone else adds a command to the file: a preset chosen now must not launder it.
      const config = join(repo, '.springfield', 'config.json');
      writeFileSync(
        config,
        JSON.stringify({ ...JSON.parse(readFileSync(config, 'utf8')), verification: [leaves('planted')] }),
      );
      const laundered = await runJson(repo, ['agents', 'use', 'claude', '--role', 'ralph'], env);
      assert.equal(laundered.code, 0, laundered.stderr);
      assert.equal(laundered.json<{ allowed: boolean }>().allowed, false);
      assert.match(
        laundered.stderr,
        /warning: the rest of .*config\.json was not allowed by you, so nothing in it runs yet: review it with 'springfield allow'/,
      );
      assert.equal(assertOk<TrustStatus>(await runJson(repo, ['allow', '--show'], env)).state, 'changed');
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });
});

describe('the user state directory', () => {
  test('a state directory planted as a link, or loose, is refused (exit 3) and nothing is written through it', async () => {
    const home = realpathSync(mkdtempSync(join(tmpdir(), 'sf-trust-home-')));
    try {
      const repo = join(home, 'repo');
      mkdirSync(join(repo, '.springfield'), { recursive: true });
      git(home, 'init', '-q', '-b', 'main', repo);
      writeFileSync(join(repo, '.springfield', 'config.json'), JSON.stringify({ roles: { ralph: ['true'] } }));
      const state = join(home, 'state');
      const target = join(home, 'target');
      mkdirSync(state);
      mkdirSync(target);
      symlinkSync(target, join(state, 'springfield'));

      const r = assertFails(await runJson(repo, ['allow'], { XDG_STATE_HOME: state }), 3, 'unsafe_directory');
      assert.match(r.message, /springfield is a link; refusing to write through it/);
      assert.deepEqual(readdirSync(target), []);

      rmSync(join(state, 'springfield'));
      const fresh = assertOk<TrustStatus>(await runJson(repo, ['allow'], { XDG_STATE_HOME: state }));
      assert.equal(fresh.state, 'allowed');
      assert.equal(statSync(join(state, 'springfield')).mode & 0o777, 0o700);
      if (process.getuid?.() === 0) {
        // A record someone else wrote (they own it) is not believed.
        chownSync(fresh.record_file, 65534, 65534);
        assert.equal(
          assertOk<TrustStatus>(await runJson(repo, ['allow', '--show'], { XDG_STATE_HOME: state })).state,
          'new',
        );
      }
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });

  test('allow with no repository config says there is nothing to allow; HOME is used without XDG_STATE_HOME', async () => {
    const home = realpathSync(mkdtempSync(join(tmpdir(), 'sf-trust-home-')));
    try {
      const repo = join(home, 'repo');
      git(home, 'init', '-q', '-b', 'main', repo);
      const none = assertOk<TrustStatus>(await runJson(repo, ['allow'], { XDG_STATE_HOME: undefined, HOME: home }));
      assert.equal(none.state, 'no_config');
      mkdirSync(join(repo, '.springfield'));
      writeFileSync(join(repo, '.springfield', 'config.json'), '{"roles": {"ralph": ["true"]}}');
      const allowed = assertOk<TrustStatus>(await runJson(repo, ['allow'], { XDG_STATE_HOME: undefined, HOME: home }));
      assert.ok(
        allowed.record_file.startsWith(join(home, '.local', 'state', 'springfield') + '/'),
        allowed.record_file,
      );
      writeFileSync(join(repo, '.springfield', 'config.json'), '{"roles": {"ralph": "not a command"}}');
      assertFails(await runJson(repo, ['allow'], { XDG_STATE_HOME: undefined, HOME: home }), 2, 'invalid_config');
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });
});
