// The one environment policy of every git call, and the parsers of git's porcelain output (docs/git.md).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { errorLine, gitEnv, gitFailure } from '../../src/core/git/exec.ts';
import { isConflicted, parseStatus } from '../../src/core/git/status.ts';
import { parseWorktreeList } from '../../src/core/git/worktrees.ts';

test('git gets the caller environment without what points it elsewhere or makes it start programs', () => {
  const env = gitEnv({
    PATH: '/usr/bin',
    HOME: '/home/p',
    SSH_AUTH_SOCK: '/tmp/agent',
    GNUPGHOME: '/home/p/.gnupg',
    XDG_CONFIG_HOME: '/home/p/.config',
    SF_HOOK_VALUE: 'kept',
    GIT_AUTHOR_NAME: 'P',
    GIT_COMMITTER_EMAIL: 'p@example.com',
    GIT_AUTHOR_DATE: '2020-01-01T00:00:00Z',
    GIT_CONFIG_GLOBAL: '/home/p/.gitconfig-work',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CEILING_DIRECTORIES: '/home',
    GIT_DIR: '/elsewhere/.git',
    GIT_WORK_TREE: '/elsewhere',
    GIT_INDEX_FILE: '/tmp/index',
    GIT_COMMON_DIR: '/elsewhere/.git',
    GIT_EDITOR: 'vim',
    GIT_SEQUENCE_EDITOR: 'vim',
    GIT_PAGER: 'less',
    GIT_ASKPASS: '/bin/askpass',
    GIT_SSH_COMMAND: 'ssh -i key',
    GIT_CONFIG_PARAMETERS: "'core.hookspath'='/tmp/h'",
    GIT_CONFIG_COUNT: '1',
    GIT_CONFIG_KEY_0: 'core.fsmonitor',
    GIT_CONFIG_VALUE_0: '/tmp/x',
    GIT_EXEC_PATH: '/tmp/git-core',
    GIT_TEMPLATE_DIR: '/tmp/t',
    GIT_EXTERNAL_DIFF: '/tmp/d',
    GIT_PROXY_COMMAND: '/tmp/p',
    GIT_TERMINAL_PROMPT: '1',
    EDITOR: 'vim',
    VISUAL: 'code --wait',
    PAGER: 'less',
    SSH_ASKPASS: '/bin/askpass',
    PREFIX: '/opt',
    LANGUAGE: 'de',
    LC_ALL: 'de_DE.UTF-8',
    LANG: 'de_DE.UTF-8',
    ELECTRON_RUN_AS_NODE: '1',
    VSCODE_GIT_ASKPASS_NODE: '/x',
    VSCODE_PID: '1',
  });
  assert.deepEqual(env, {
    PATH: '/usr/bin',
    HOME: '/home/p',
    SSH_AUTH_SOCK: '/tmp/agent',
    GNUPGHOME: '/home/p/.gnupg',
    XDG_CONFIG_HOME: '/home/p/.config',
    SF_HOOK_VALUE: 'kept',
    GIT_AUTHOR_NAME: 'P',
    GIT_COMMITTER_EMAIL: 'p@example.com',
    GIT_AUTHOR_DATE: '2020-01-01T00:00:00Z',
    GIT_CONFIG_GLOBAL: '/home/p/.gitconfig-work',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CEILING_DIRECTORIES: '/home',
    LANG: 'de_DE.UTF-8',
    GIT_TERMINAL_PROMPT: '0',
    GIT_EDITOR: ':',
    GIT_OPTIONAL_LOCKS: '0',
    LC_ALL: 'C.UTF-8',
  });
});

test("a failed git call is one line naming the command, the directory and git's first error line", () => {
  const err = gitFailure('/r/wt', ['-c', 'core.quotePath=false', 'worktree', 'add', '-b', 'x', '/r/x'], {
    status: 128,
    stdout: '',
    stderr: "hint: something\nfatal: '/r/x' already exists\nmore detail\n",
  });
  assert.equal(err.category, 'environment');
  assert.equal(err.code, 'git_failed');
  assert.equal(err.message, "git worktree add failed in /r/wt: fatal: '/r/x' already exists");
  const notRepo = gitFailure('/tmp/x', ['status'], {
    status: 128,
    stdout: '',
    stderr: 'fatal: not a git repository (or any of the parent directories): .git\n',
  });
  assert.equal(notRepo.code, 'not_a_git_repository');
  assert.match(notRepo.message, /^\/tmp\/x is not inside a git repository/);
  assert.equal(
    gitFailure('/r', ['diff', '--cached', '--quiet'], { status: 129, stdout: '', stderr: '' }).message,
    'git diff failed in /r: exit 129',
  );
  // Progress comes before the reason (seen: a planning worktree's failure said only "Preparing worktree").
  assert.equal(
    errorLine(
      "Preparing worktree (detached HEAD f954d70)\nfatal: could not create leading directories of '/r.springfield/x/.git'\n",
    ),
    "fatal: could not create leading directories of '/r.springfield/x/.git'",
  );
  assert.equal(errorLine('Preparing worktree\nerror: cannot lock ref\n'), 'error: cannot lock ref');
  assert.equal(errorLine('hint: x\nsomething odd\n'), 'something odd');
});

test('git status --porcelain -z: renames take their old path along, conflicts are recognised', () => {
  const entries = parseStatus(
    ' M src/a.ts\0R  new name.ts\0old name.ts\0?? notes/with\nnewline.txt\0UU both.ts\0AA added.ts\0A  staged.ts\0',
  );
  assert.deepEqual(
    entries.map((e) => [e.index, e.worktree, e.path]),
    [
      [' ', 'M', 'src/a.ts'],
      ['R', ' ', 'new name.ts'],
      ['?', '?', 'notes/with\nnewline.txt'],
      ['U', 'U', 'both.ts'],
      ['A', 'A', 'added.ts'],
      ['A', ' ', 'staged.ts'],
    ],
  );
  assert.deepEqual(
    entries.filter(isConflicted).map((e) => e.path),
    ['both.ts', 'added.ts'],
  );
  assert.deepEqual(parseStatus(''), []);
});

test('git worktree list --porcelain -z: one parser for bare, prunable, detached and branch entries', () => {
  const text = [
    'worktree /gone/bare',
    'bare',
    '',
    'worktree /gone/main',
    'HEAD abc',
    'branch refs/heads/main',
    '',
    'worktree /gone/wt a',
    'HEAD def',
    'detached',
    'prunable gitdir file points to non-existent location',
    '',
    '',
  ].join('\0');
  assert.deepEqual(parseWorktreeList(text), [
    { path: '/gone/bare', bare: true, missing: true, branch: null },
    { path: '/gone/main', bare: false, missing: true, branch: 'refs/heads/main' },
    { path: '/gone/wt a', bare: false, missing: true, branch: null },
  ]);
});
