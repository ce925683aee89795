// Every flag a preset passes must exist in that CLI's own --help (for the subcommand it uses), at
// the version the preset names: the npm-published CLIs are installed into .cache/agent-clis and
// asked; Aider and Cursor (not on npm) are checked against help texts captured with their version
// in test/fixtures/agent-help. A renamed or misspelt flag fails here, not in a user's first run.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { AGENT_PRESETS, kickoff, PRESET_ROLES, type AgentPreset } from '../../src/core/runs/presets.ts';
import { ensureAgentClis } from '../../scripts/agentClis.ts';
import { cleanEnv, PROJECT_ROOT } from '../helpers/gitRepo.ts';

const FIXTURES = join(PROJECT_ROOT, 'test', 'fixtures', 'agent-help');
/** When a CLI that was asked for its help counts as hung: Gemini CLI takes 3 s quiet, over 20 s on a loaded machine. */
const HANG_MS = 5 * 60_000;

/** What in `argv` the help does not know: flags missing from it, or values it never mentions. */
export function unknownToHelp(preset: AgentPreset, argv: readonly string[], help: string): string[] {
  const text = help
    .split('\n')
    .filter((l) => !l.startsWith('# '))
    .join('\n');
  const prompts = new Set(PRESET_ROLES.map(kickoff));
  const problems: string[] = [];
  const mentions = (word: string, flag: boolean) => {
    const escaped = word.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    return new RegExp(
      flag ? `(^|[\\s,[|(])${escaped}(?=[\\s,=\\]|<)]|$)` : `(^|[^\\w-])${escaped}($|[^\\w-])`,
      'm',
    ).test(text);
  };
  if (argv[0] !== preset.program) problems.push(`starts with ${argv[0]}, not ${preset.program}`);
  for (const [i, sub] of preset.subcommand.entries())
    if (argv[1 + i] !== sub) problems.push(`argument ${1 + i} is ${argv[1 + i]}, not the subcommand ${sub}`);
  const words = argv.slice(1 + preset.subcommand.length);
  for (const [i, word] of words.entries()) {
    if (prompts.has(word) || word.includes('$SPRINGFIELD_')) continue;
    // A config override's key is checked by the CLI itself (codexConfigOverrides below), not by its help.
    if (preset.id === 'codex' && (words[i - 1] === '-c' || words[i - 1] === '--config') && /^[a-z_.]+=/.test(word))
      continue;
    if (word.startsWith('-')) {
      if (!mentions(word.split('=')[0] as string, true)) problems.push(`flag ${word} is not in the help`);
    } else if (!mentions(word, false)) {
      problems.push(`value ${word} is not in the help`);
    }
  }
  return problems;
}

/** A CLI's output on both streams (some print their help on stderr). */
function run(bin: string, args: readonly string[], home: string): string {
  const r = spawnSync(bin, args, {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout: HANG_MS,
    env: cleanEnv({ HOME: home, XDG_CONFIG_HOME: join(home, '.config'), CI: '1', NO_COLOR: '1', COLUMNS: '200' }),
  });
  if (r.status !== 0)
    throw new Error(
      `${bin} ${args.join(' ')} failed (exit ${r.status ?? r.signal}): ${r.stderr || r.error?.message}\n${r.stdout}`,
    );
  return r.stdout + r.stderr;
}

describe('agent presets against their CLIs', () => {
  let bin = '';
  let home = '';
  before(
    async () => {
      bin = await ensureAgentClis();
      home = mkdtempSync(join(tmpdir(), 'springfield-agent-home-'));
    },
    { timeout: 15 * 60_000 },
  );
  after(() => {
    if (home) rmSync(home, { recursive: true, force: true });
  });

  test('the checker reports a flag the help does not have', () => {
    const preset = AGENT_PRESETS.find((p) => p.id === 'cursor') as AgentPreset;
    const help = readFileSync(join(FIXTURES, 'cursor-2026.09.28-64d2043.txt'), 'utf8');
    assert.deepEqual(
      unknownToHelp(preset, ['cursor-agent', '--print', '--forcee', '--sandbox', 'off', kickoff('ralph')], help),
      ['flag --forcee is not in the help', 'value off is not in the help'],
    );
    assert.deepEqual(
      unknownToHelp(preset, ['cursor-agent', '--print', '--force', '--sandbox', 'disabled', kickoff('ralph')], help),
      [],
    );
  });

  for (const preset of AGENT_PRESETS.filter((p) => p.npm)) {
    test(
      `${preset.name} ${preset.checkedVersion}: every flag of every role is in \`${[preset.program, ...preset.subcommand].join(' ')} --help\``,
      { timeout: 3 * HANG_MS },
      () => {
        const exe = join(bin, preset.program);
        const version = run(exe, ['--version'], home);
        assert.ok(
          version.includes(preset.checkedVersion),
          `installed ${preset.program} reports ${version.trim()}, the preset was checked with ${preset.checkedVersion}`,
        );
        if (preset.subcommand.length > 0)
          assert.match(
            run(exe, ['--help'], home),
            new RegExp(`\\b${preset.subcommand[0]}\\b`),
            'the subcommand exists',
          );
        const help = run(exe, [...preset.subcommand, '--help'], home);
        for (const role of PRESET_ROLES) {
          const argv = preset.roles[role];
          if (argv) assert.deepEqual(unknownToHelp(preset, argv, help), [], `${preset.id} as ${role}`);
        }
      },
    );
  }

  for (const preset of AGENT_PRESETS.filter((p) => !p.npm)) {
    test(`${preset.name} ${preset.checkedVersion} (not on npm): every flag is in its captured --help`, () => {
      const file = readdirSync(FIXTURES).find((f) => f === `${preset.id}-${preset.checkedVersion}.txt`);
      assert.ok(
        file,
        `test/fixtures/agent-help/${preset.id}-${preset.checkedVersion}.txt holds the help of the version the preset names`,
      );
      const help = readFileSync(join(FIXTURES, file), 'utf8');
      for (const role of PRESET_ROLES) {
        const argv = preset.roles[role];
        if (argv) assert.deepEqual(unknownToHelp(preset, argv, help), [], `${preset.id} as ${role}`);
      }
    });
  }

  test(
    'Codex recognises every configuration key the preset sets with -c (it names the keys it ignores)',
    { timeout: 2 * HANG_MS },
    () => {
      const argv = AGENT_PRESETS.find((p) => p.id === 'codex')?.roles.ralph ?? [];
      const keys = argv.flatMap((a, i) => (argv[i - 1] === '-c' ? [a] : []));
      assert.ok(keys.length > 0, 'the preset sets configuration');
      const ignored = (overrides: readonly string[]) => {
        const cwd = mkdtempSync(join(tmpdir(), 'springfield-codex-'));
        const codexHome = join(cwd, '.codex');
        try {
          spawnSync('git', ['init', '-q'], { cwd });
          mkdirSync(codexHome);
          // Nothing listens on port 9 of loopback: the run fails at once, after reading its configuration.
          writeFileSync(
            join(codexHome, 'config.toml'),
            'model = "gpt-5.5"\nmodel_provider = "none"\n[features]\nunbounded_connection_retries = false\nplugins = false\n[model_providers.none]\nname = "none"\nbase_url = "http://127.0.0.1:9/v1"\nwire_api = "responses"\nrequest_max_retries = 0\nstream_max_retries = 0\n',
          );
          const r = spawnSync(join(bin, 'codex'), ['exec', ...overrides.flatMap((o) => ['-c', o]), '--json', 'hi'], {
            cwd,
            encoding: 'utf8',
            stdio: ['ignore', 'pipe', 'pipe'],
            timeout: HANG_MS,
            env: cleanEnv({ HOME: cwd, CODEX_HOME: codexHome }),
          });
          return /unrecognized configuration setting/.test(r.stdout + r.stderr);
        } finally {
          rmSync(cwd, { recursive: true, force: true });
        }
      };
      assert.equal(ignored(['springfield_no_such_key=1']), true, 'the check sees a key Codex does not know');
      assert.equal(ignored(keys), false, `codex knows ${keys.join(', ')}`);
    },
  );

  test(
    'Claude Code accepts the preset invocation as a whole: it gets as far as asking for a login',
    { timeout: HANG_MS },
    () => {
      // Flag combinations are refused before any model call (stream-json without --verbose is, for one).
      const argv = AGENT_PRESETS.find((p) => p.id === 'claude')?.roles.ralph ?? [];
      const cwd = mkdtempSync(join(tmpdir(), 'springfield-claude-'));
      try {
        const r = spawnSync(join(bin, 'claude'), argv.slice(1), {
          cwd,
          encoding: 'utf8',
          stdio: ['ignore', 'pipe', 'pipe'],
          timeout: HANG_MS,
          env: cleanEnv({ HOME: home, ANTHROPIC_API_KEY: undefined, CI: '1' }),
        });
        const last = r.stdout.trim().split('\n').at(-1) ?? '';
        assert.ok(
          last.startsWith('{'),
          `claude refused the preset's arguments (exit ${r.status}): ${r.stderr}${r.stdout}`,
        );
        const result = JSON.parse(last) as { type: string; result?: string; total_cost_usd?: number };
        assert.equal(result.type, 'result', 'the last line is the result event the usage spec reads');
        assert.match(result.result ?? '', /log ?in/i, 'it stopped at the login, past argument parsing');
        assert.equal(typeof result.total_cost_usd, 'number');
      } finally {
        rmSync(cwd, { recursive: true, force: true });
      }
    },
  );
});
