// The readable form of agent CLIs' JSON events (docs/agents.md, "What a terminal shows").
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { test } from 'node:test';
import { AgentOutputRenderer, agentOutputFormat, renderAgentLine } from '../../src/core/runs/agentOutput.ts';

const cwd = '/work/repo.springfield/sf-1';

test('Claude Code events: tools with their command or file, results cut to a few lines, its words, the closing cost', () => {
  const tool = JSON.stringify({
    type: 'assistant',
    message: {
      content: [
        { type: 'thinking', thinking: 'hmm' },
        { type: 'text', text: 'Building it.' },
        { type: 'tool_use', name: 'Edit', input: { file_path: `${cwd}/src/a.ts`, old_string: 'x' } },
      ],
    },
  });
  assert.deepEqual(renderAgentLine('claude', tool, cwd), ['Building it.', '▸ Edit  src/a.ts']);
  const result = JSON.stringify({
    type: 'user',
    message: { content: [{ type: 'tool_result', content: 'l1\nl2\n\nl3\nl4\nl5\nl6', is_error: true }] },
  });
  assert.deepEqual(renderAgentLine('claude', result, cwd), [
    '  ✗ l1',
    '  ✗ l2',
    '  ✗ l3',
    '  ✗ l4',
    '  ✗ … 2 more lines',
  ]);
  const end = JSON.stringify({
    type: 'result',
    subtype: 'error_max_turns',
    is_error: true,
    num_turns: 40,
    total_cost_usd: 1.23456,
    usage: { input_tokens: 120000, output_tokens: 3400 },
  });
  assert.deepEqual(renderAgentLine('claude', end, cwd), [
    '■ finished (error_max_turns): 40 turns · 120,000 input / 3,400 output tokens · $1.2346',
  ]);
  assert.deepEqual(
    renderAgentLine('claude', JSON.stringify({ type: 'stream_event', event: {} }), cwd),
    [],
    'events of no interest are dropped',
  );
});

test('Codex events: the shell wrapper is taken off commands; a failing command says its exit code', () => {
  assert.deepEqual(
    renderAgentLine(
      'codex',
      JSON.stringify({
        type: 'item.started',
        item: { type: 'command_execution', command: "/bin/bash -lc 'npm test'" },
      }),
      cwd,
    ),
    ['▸ npm test'],
  );
  assert.deepEqual(
    renderAgentLine(
      'codex',
      JSON.stringify({
        type: 'item.completed',
        item: { type: 'command_execution', aggregated_output: 'FAIL a.test\n', exit_code: 1 },
      }),
      cwd,
    ),
    ['    FAIL a.test', '  ✗ exit 1'],
  );
  assert.deepEqual(
    renderAgentLine(
      'codex',
      JSON.stringify({
        type: 'item.completed',
        item: {
          type: 'file_change',
          changes: [
            { path: `${cwd}/b.ts`, kind: 'update' },
            { path: '/etc/x', kind: 'add' },
          ],
        },
      }),
      cwd,
    ),
    ['▸ update  b.ts', '▸ add  /etc/x'],
  );
});

test('lines that are not JSON events pass through as printed; a long command is cut to one line', () => {
  assert.deepEqual(renderAgentLine('codex', 'Reading additional input from stdin...', cwd), [
    'Reading additional input from stdin...',
  ]);
  assert.deepEqual(renderAgentLine('claude', '{not json', cwd), ['{not json']);
  assert.deepEqual(renderAgentLine('claude', '[1,2]', cwd), ['[1,2]']);
  const [line] = renderAgentLine(
    'copilot',
    JSON.stringify({
      type: 'tool.execution_start',
      data: { toolName: 'bash', arguments: { command: `echo ${'x'.repeat(400)}\necho y` } },
    }),
    cwd,
  );
  assert.equal(line?.length, 160 + '▸ bash  '.length);
  assert.ok(line?.endsWith('…'));
});

test("the renderer waits for a line's end across chunks and flushes the last partial line at the end", () => {
  const sink = new PassThrough();
  let shown = '';
  sink.on('data', (d: Buffer) => {
    shown += d.toString();
  });
  const r = new AgentOutputRenderer('claude', cwd, sink);
  const line = JSON.stringify({
    type: 'assistant',
    message: { content: [{ type: 'tool_use', name: 'Bash', input: { command: 'springfield start p.md step-1' } }] },
  });
  r.write(Buffer.from(line.slice(0, 30)));
  assert.equal(shown, '');
  r.write(Buffer.from(`${line.slice(30)}\nplain tail`));
  r.end();
  assert.equal(shown, '▸ Bash  springfield start p.md step-1\nplain tail\n');
});

test('only the presets whose CLI prints JSON events are rendered', () => {
  assert.deepEqual(['claude', 'codex', 'copilot', 'gemini', 'opencode', undefined].map(agentOutputFormat), [
    'claude',
    'codex',
    'copilot',
    null,
    null,
    null,
  ]);
});
