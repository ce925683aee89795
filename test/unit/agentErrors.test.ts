// The headline of a failed run: each preset's own error, read from output as its CLI prints it
// (captured from the real CLIs against a scripted model server; docs/scheduler-faults.md).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { agentError, lastAgentLine } from '../../src/core/runs/agentErrors.ts';
import { findPreset } from '../../src/core/runs/presets.ts';

const errorsOf = (id: string) => findPreset(id)?.errors ?? [];

test("Gemini's error: one pretty-printed JSON document on stderr among its notices, the server's body unwrapped", () => {
  const stderr = [
    'YOLO mode is enabled. All tool calls will be automatically approved.',
    'Ripgrep is not available. Falling back to GrepTool.',
    '{',
    '  "session_id": "a4935d47",',
    '  "error": {',
    '    "type": "Error",',
    '    "message": "{\\"error\\":{\\"code\\":401,\\"message\\":\\"API key not valid\\",\\"status\\":\\"UNAUTHENTICATED\\"}}",',
    '    "code": 401',
    '  }',
    '}',
  ].join('\n');
  assert.equal(agentError(errorsOf('gemini'), stderr), 'API key not valid');
  const auth =
    '{\n  "error": {\n    "type": "Error",\n    "message": "Please set an Auth method in your /h/.gemini/settings.json",\n    "code": 41\n  }\n}\n';
  assert.equal(agentError(errorsOf('gemini'), auth), 'Please set an Auth method in your /h/.gemini/settings.json');
  assert.equal(lastAgentLine(auth), '}', 'what a block said before: a brace');
});

test("Copilot's error: a session.error event, or its plain-text line when it cannot even start", () => {
  const jsonl = [
    JSON.stringify({ type: 'session.info', data: { message: 'retrying' } }),
    JSON.stringify({
      type: 'session.error',
      data: {
        errorType: 'authentication',
        message: 'Authentication failed with provider (HTTP 401).',
        statusCode: 401,
      },
    }),
    JSON.stringify({ type: 'result', exitCode: 1 }),
  ].join('\n');
  assert.equal(agentError(errorsOf('copilot'), jsonl), 'Authentication failed with provider (HTTP 401).');
  const text =
    "Error: No authentication information found.\n\nCopilot can be authenticated with GitHub using an OAuth Token.\n  • Run 'gh auth login' to authenticate with the GitHub CLI\n";
  assert.equal(agentError(errorsOf('copilot'), text), 'No authentication information found.');
});

test("Codex's turn.failed wins over its retries; none is read from a run that reported no error", () => {
  const out = [
    JSON.stringify({ type: 'error', message: 'Reconnecting... 1/5 (stream disconnected)' }),
    JSON.stringify({ type: 'turn.failed', error: { message: 'unexpected status 401 Unauthorized: bad key' } }),
  ].join('\n');
  assert.equal(agentError(errorsOf('codex'), out), 'unexpected status 401 Unauthorized: bad key');
  assert.equal(agentError(errorsOf('codex'), '{"type":"turn.completed","usage":{}}\n'), null);
});

test("the fallback headline is the agent's last line, never Springfield's own note", () => {
  assert.equal(
    lastAgentLine("thinking very hard\n[springfield] timed out after 2 s: ending the agent's process group\n"),
    'thinking very hard',
  );
  assert.equal(lastAgentLine('[springfield] ended processes the agent left running\n\n'), null);
  assert.equal(lastAgentLine(`${'x'.repeat(500)}\n`)?.length, 301, 'cut with an ellipsis');
});
