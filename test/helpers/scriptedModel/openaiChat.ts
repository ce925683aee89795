// The OpenAI chat completions API as opencode (a custom provider) and Copilot CLI (BYOK) call it:
// POST /v1/chat/completions, streamed as `chat.completion.chunk` events. The conversation that began
// with Springfield's kickoff is played by roleScript.ts through the CLI's own tools: opencode's
// bash/read/write, Copilot's bash/view/create; any other request gets a short text answer.
import type { ServerResponse } from 'node:http';
import { isKickoff, turnFor, type Conversation, type Turn } from './roleScript.ts';
import { json, sse, type Adapter, type ModelRequest } from './server.ts';

interface Part {
  type?: string;
  text?: string;
}
interface Message {
  role: string;
  content?: string | Part[] | null;
  tool_calls?: { id: string; function: { name: string } }[];
  tool_call_id?: string;
}
interface Body {
  model?: string;
  messages?: Message[];
  tools?: { function?: { name?: string } }[];
  stream?: boolean;
}

const textOf = (m: Message): string =>
  typeof m.content === 'string' ? m.content : (m.content ?? []).map((p) => p.text ?? '').join('\n');
/** A tool's result as the model reads it: Copilot's bash adds a `<shellId: 0 completed with exit code 0>` line. */
const resultOf = (m: Message): string => textOf(m).replace(/\n?<shellId: [^>]*>\s*$/, '');
const toolsOf = (body: Body): Set<string> => new Set((body.tools ?? []).map((t) => t.function?.name ?? ''));

/** Springfield's kickoff and the tool results so far, for a request of that conversation with tools offered. */
function conversationOf(body: Body): Conversation | null {
  const messages = body.messages ?? [];
  const kickoff = messages
    .filter((m) => m.role === 'user')
    .map(textOf)
    .find(isKickoff);
  if (!kickoff || toolsOf(body).size === 0) return null;
  return { kickoff, results: messages.filter((m) => m.role === 'tool').map(resultOf) };
}

export const openaiChat: Adapter = {
  name: 'openai-chat',
  handles: (method, path) => method === 'POST' && /\/chat\/completions$/.test(path),
  conversation: (request) => conversationOf((request.body ?? {}) as Body),
  respond(request: ModelRequest, res: ServerResponse) {
    const body = (request.body ?? {}) as Body;
    const messages = body.messages ?? [];
    const turn = turnFor(conversationOf(body));
    const call = toCall(turn, toolsOf(body), messages.length);
    const model = body.model ?? 'scripted';
    const id = `chatcmpl-${request.at}`;
    const created = Math.floor(request.at / 1000);
    const usage = { prompt_tokens: 100 + messages.length, completion_tokens: 20, total_tokens: 120 + messages.length };
    if (!body.stream) {
      const message = call
        ? {
            role: 'assistant',
            content: null,
            tool_calls: [{ id: call.id, type: 'function', function: { name: call.name, arguments: call.arguments } }],
          }
        : { role: 'assistant', content: (turn as { text: string }).text };
      return json(res, 200, {
        id,
        object: 'chat.completion',
        created,
        model,
        choices: [{ index: 0, message, finish_reason: call ? 'tool_calls' : 'stop' }],
        usage,
      });
    }
    const chunk = (delta: unknown, finish: string | null) => ({
      data: {
        id,
        object: 'chat.completion.chunk',
        created,
        model,
        choices: [{ index: 0, delta, finish_reason: finish }],
      },
    });
    sse(res, [
      chunk({ role: 'assistant', content: '' }, null),
      call
        ? chunk(
            {
              tool_calls: [
                { index: 0, id: call.id, type: 'function', function: { name: call.name, arguments: call.arguments } },
              ],
            },
            null,
          )
        : chunk({ content: (turn as { text: string }).text }, null),
      chunk({}, call ? 'tool_calls' : 'stop'),
      { data: { id, object: 'chat.completion.chunk', created, model, choices: [], usage } },
      { data: '[DONE]' },
    ]);
  },
};

/** Tool call ids unique across the sessions this server answers. */
let calls = 0;

/** The turn as a function call through the tools this request offers, or null for the final answer. */
function toCall(
  turn: Turn,
  tools: ReadonlySet<string>,
  n: number,
): { id: string; name: string; arguments: string } | null {
  const id = `call_${String(n).padStart(4, '0')}_${++calls}`;
  const bash = (command: string) => ({
    id,
    name: 'bash',
    arguments: JSON.stringify({
      command,
      description: 'Run a command',
      ...(tools.has('view') ? { mode: 'sync' } : {}),
    }),
  });
  switch (turn.kind) {
    case 'final':
      return null;
    case 'bash':
      return bash(turn.command);
    case 'read':
      if (tools.has('read')) return { id, name: 'read', arguments: JSON.stringify({ filePath: turn.path }) };
      if (tools.has('view')) return { id, name: 'view', arguments: JSON.stringify({ path: turn.path }) };
      return bash(`cat '${turn.path}'`);
    case 'write':
      if (tools.has('write'))
        return { id, name: 'write', arguments: JSON.stringify({ filePath: turn.path, content: turn.content }) };
      if (tools.has('create'))
        return { id, name: 'create', arguments: JSON.stringify({ path: turn.path, file_text: turn.content }) };
      return bash(`mkdir -p "$(dirname '${turn.path}')" && cat > '${turn.path}' <<'EOF'\n${turn.content}EOF`);
  }
}
