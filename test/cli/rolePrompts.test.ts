// The role prompts: the plan example Lisa is taught parses, every placeholder is filled, the context
// an agent reads starts with its role's prompt (or the repository's override), `$SPRINGFIELD_*` in
// agent arguments is replaced without a shell, and the usage specs read real CLI output.
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { builtInPrompt, fillPrompt, PROMPT_NAMES, promptValues } from '../../src/core/agents/rolePrompt.ts';
import { AGENT_PRESETS, findPreset } from '../../src/core/runs/presets.ts';
import { readUsage } from '../../src/core/runs/usage.ts';
import { parsePlan } from '../../src/core/plan/parse.ts';
import { expandAgentArgv } from '../../src/core/runs/agentArgv.ts';
import { assertClaimed, assertFails, assertOk, makeRepo, planningWorktree, PROJECT_ROOT } from '../helpers/gitRepo.ts';
import { runCli, runJson } from '../helpers/cliInProcess.ts';
import type { ContextView } from '../../src/core/store/epicTypes.ts';

test("Lisa's example plan is accepted by the plan parser", () => {
  const example = /```markdown\n([\s\S]*?)\n```/.exec(builtInPrompt('lisa'))?.[1];
  assert.ok(example, 'the Lisa prompt carries an example');
  const plan = parsePlan(example, 'lisa.md example');
  assert.equal(plan.title, 'Greeting command');
  assert.deepEqual(
    plan.steps.map((s) => [s.anchor, s.dependsOn]),
    [
      ['step-1', []],
      ['step-2', ['step-1']],
    ],
  );
  assert.deepEqual(Object.keys(plan.sections).sort(), ['Approach', 'Constraints']);
  assert.ok(
    plan.steps.every((s) => s.items.length > 0),
    'every step has items',
  );
});

test('every placeholder of the built-in prompts has a value', () => {
  const view = { epic: { id: 'sf-abcd', title: 'T' }, plan: null, step: null } as unknown as ContextView;
  const values = promptValues({ view, planPath: 'plans/p.md', baseBranch: 'main', verification: [] });
  for (const name of PROMPT_NAMES) {
    const left = fillPrompt(builtInPrompt(name), values).match(/\{\{[^}]*\}\}/g);
    assert.equal(left, null, `${name}.md leaves ${left?.join(', ')}`);
  }
  assert.equal(fillPrompt('{{epic}} {{nope}}', values), 'sf-abcd {{nope}}', 'unknown names are left as they are');
});

test('the context an agent reads starts with its prompt, filled in with the real epic, plan and step', async (t) => {
  const plan = '# Plan: P\n\n## Step 1: First thing {#step-1}\n**Tasks:**\n- [ ] Do it\n**Tests:**\n- [ ] Test it\n';
  const repo = makeRepo({ files: { '.gitignore': '.springfield/\n', 'plans/p.md': plan } });
  t.after(() => repo.cleanup());
  const epic = assertOk<{ id: string }>(
    await runJson(repo.root, ['epic', 'create', 'Thing', '--complexity', 'standard']),
  ).id;
  mkdirSync(join(repo.root, '.springfield'), { recursive: true });
  writeFileSync(
    join(repo.root, '.springfield', 'config.json'),
    JSON.stringify({ verification: [['npm', 'run', 'test suite']] }),
  );

  const lisa = await runCli(repo.root, ['context', '--epic', epic, '--role', 'lisa']);
  assert.match(lisa.stdout, new RegExp(`^# You are Lisa, the planner, for epic ${epic}: Thing\n`));
  assert.match(lisa.stdout, new RegExp(`springfield plan propose ${epic} plans/${epic}.md`));
  assert.match(lisa.stdout, /\n---\n\n# Springfield context\n/, 'then the context');

  assertOk(await runJson(repo.root, ['plan', 'propose', epic, 'plans/p.md']));
  assertOk(await runJson(repo.root, ['plan', 'approve', epic]));
  const wt = assertOk<{ worktree_path: string }>(await runJson(repo.root, ['epic', 'start', epic])).worktree_path;
  assertClaimed(await runJson(wt, ['claim', 'plans/p.md']));
  const ralph = await runCli(wt, ['context', '--role', 'ralph'], { SPRINGFIELD_EPIC: epic });
  assert.match(ralph.stdout, /^# You are Ralph, the builder: step step-1 of plans\/p\.md/);
  assert.ok(ralph.stdout.includes('springfield start plans/p.md step-1\n'));
  assert.ok(
    ralph.stdout.includes(
      'springfield update plans/p.md step-1 --task 0 completed\nspringfield update plans/p.md step-1 --test 0 completed\n',
    ),
    ralph.stdout,
  );
  assert.ok(ralph.stdout.includes("npm run 'test suite'\n"), 'the verification commands, quoted for a shell');
  assert.ok(
    ralph.stdout.includes('springfield commit -m "<what you did, in one line>" --plan plans/p.md --step step-1'),
  );

  mkdirSync(join(repo.root, '.springfield', 'prompts'));
  writeFileSync(
    join(repo.root, '.springfield', 'prompts', 'ralph.md'),
    '# Our Ralph for {{step}}\n\n```sh\nmake {{step}}\n```\n',
  );
  const ours = await runCli(wt, ['context', '--role', 'ralph'], { SPRINGFIELD_EPIC: epic });
  assert.match(
    ours.stdout,
    /^# Our Ralph for step-1\n\n```sh\nmake step-1\n```\n\n---\n/,
    'the repository override wins',
  );

  symlinkSync(
    join(PROJECT_ROOT, 'src', 'core', 'agents', 'prompts', 'bart.md'),
    join(repo.root, '.springfield', 'prompts', 'bart.md'),
  );
  const linked = assertFails(
    await runJson(repo.root, ['context', '--epic', epic, '--role', 'bart']),
    2,
    'prompt_symlink',
  );
  assert.match(linked.message, /bart\.md: is a symbolic link/);
  assertFails(await runJson(repo.root, ['context', '--role', 'marge']), 2, 'bad_option');
});

test('$SPRINGFIELD_* in agent arguments is replaced as text, one argument staying one argument', () => {
  const env = { SPRINGFIELD_CONTEXT_FILE: '/r/.springfield/context/7.md', SPRINGFIELD_STEP: 'step 2; rm -rf /' };
  assert.deepEqual(
    expandAgentArgv(
      [
        'aider',
        '--message-file',
        '$SPRINGFIELD_CONTEXT_FILE',
        'read ${SPRINGFIELD_CONTEXT_FILE} now',
        '$SPRINGFIELD_STEP',
        '$HOME',
        '$SPRINGFIELD_UNSET',
        'cost $5',
      ],
      env,
    ),
    [
      'aider',
      '--message-file',
      '/r/.springfield/context/7.md',
      'read /r/.springfield/context/7.md now',
      'step 2; rm -rf /',
      '$HOME',
      '$SPRINGFIELD_UNSET',
      'cost $5',
    ],
  );
});

test('`springfield run` hands the agent its context file through the argument', async (t) => {
  const repo = makeRepo({ files: { '.gitignore': '.springfield/\n' } });
  t.after(() => repo.cleanup());
  const epic = assertOk<{ id: string }>(await runJson(repo.root, ['epic', 'create', 'Thing'])).id;
  const r = await runCli(planningWorktree(repo, epic), [
    'run',
    '--role',
    'lisa',
    '--epic',
    epic,
    '--',
    process.execPath,
    '-e',
    'process.stdout.write(require("fs").readFileSync(process.argv[1], "utf8").split("\\n")[0])',
    '$SPRINGFIELD_CONTEXT_FILE',
  ]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, new RegExp(`^# You are Lisa, the planner, for epic ${epic}: Thing`));
});

test('the usage specs read the output the CLIs print', () => {
  // Captured from Claude Code 2.1.330 (`claude -p … --output-format stream-json --verbose`, not logged in).
  const claude = readFileSync(
    join(PROJECT_ROOT, 'test', 'fixtures', 'agent-output', 'claude-2.1.330-not-logged-in.jsonl'),
    'utf8',
  );
  const spec = (id: string) => findPreset(id)?.usage ?? assert.fail(`${id} has a usage spec`);
  assert.deepEqual(readUsage(spec('claude'), `{"type":"system"}\n${claude}`), {
    costUsd: 0,
    inputTokens: 0,
    outputTokens: 0,
    cacheReadTokens: 0,
    cacheWriteTokens: 0,
    premiumRequests: null,
  });
  assert.equal(readUsage(spec('claude'), '{"type":"system"}\n'), null, 'no result event (a crash): no usage');
  // Shapes from each CLI's documentation (docs/agents.md lists the sources).
  assert.deepEqual(
    readUsage(
      spec('codex'),
      '{"type":"thread.started"}\n{"type":"turn.completed","usage":{"input_tokens":100,"cached_input_tokens":40,"output_tokens":7}}\n{"type":"turn.completed","usage":{"input_tokens":50,"cached_input_tokens":0,"output_tokens":3}}\n',
    ),
    {
      costUsd: null,
      inputTokens: 150,
      outputTokens: 10,
      cacheReadTokens: 40,
      cacheWriteTokens: null,
      premiumRequests: null,
    },
  );
  assert.deepEqual(
    readUsage(
      spec('gemini'),
      'YOLO mode is enabled.\n{\n "response": "ok",\n "stats": {"models": {"a": {"tokens": {"prompt": 10, "candidates": 2, "cached": 1}}, "b": {"tokens": {"prompt": 5, "candidates": 1, "cached": 0}}}}\n}\n',
    ),
    {
      costUsd: null,
      inputTokens: 15,
      outputTokens: 3,
      cacheReadTokens: 1,
      cacheWriteTokens: null,
      premiumRequests: null,
    },
  );
  assert.deepEqual(
    readUsage(
      spec('opencode'),
      '{"type":"step_finish","part":{"cost":0.5,"tokens":{"input":10,"output":2,"cache":{"read":3,"write":1}}}}\n{"type":"step_finish","part":{"cost":0.25,"tokens":{"input":1,"output":1,"cache":{"read":0,"write":0}}}}\n',
    ),
    { costUsd: 0.75, inputTokens: 11, outputTokens: 3, cacheReadTokens: 3, cacheWriteTokens: 1, premiumRequests: null },
  );
  assert.equal(readUsage(spec('copilot'), '{"type":"result","usage":{"premiumRequests":3}}\n')?.premiumRequests, 3);
  assert.equal(
    readUsage(
      spec('aider'),
      'Tokens: 1.2k sent, 300 received. Cost: $0.01 message, $0.04 session.\nTokens: 2k sent. Cost: $0.02 message, $0.06 session.\n',
    )?.costUsd,
    0.06,
  );
  assert.equal(AGENT_PRESETS.find((p) => p.id === 'cursor')?.usage, null, 'Cursor reports no tokens');
});
