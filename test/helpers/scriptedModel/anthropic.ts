// The Anthropic Messages API as Claude Code calls it (ANTHROPIC_BASE_URL): POST /v1/messages,
// streamed as server-sent events. The conversation that began with Springfield's kickoff is played
// by roleScript.ts through Claude Code's own tools (Bash, Read, Write); any other request (a title,
// a quota check) gets a short text answer.
import type { ServerResponse } from 'node:http';
import { isKickoff, turnFor, type Conversation, type Turn } from './roleScript.ts';
import { json, sse, type Adapter, type ModelRequest } from './server.ts';

interface Block {
  type: string;
  text?: string;
  id?: string;
  name?: string;
  input?: unknown;
  tool_use_id?: string;
  content?: string | Block[];
  is_error?: boolean;
}
interface Message {
  role: string;
  content: string | Block[];
}
interface Body {
  model?: string;
  messages?: Message[];
  tools?: { name: string }[];
  stream?: boolean;
}

const blocks = (m: Message | undefined): Block[] =>
  typeof m?.content === 'string' ? [{ type: 'text', text: m.content }] : (m?.content ?? []);
const text = (b: Block): string =>
  typeof b.content === 'string' ? b.content : (b.content ?? []).map((c) => c.text ?? '').join('\n');
const toolsOf = (body: Body): Set<string> => new Set((body.tools ?? []).map((t) => t.name));

/** Springfield's kickoff and the tool results so far, for a request of that conversation with tools offered. */
function conversationOf(body: Body): Conversation | null {
  const messages = body.messages ?? [];
  const kickoff = blocks(messages.find((m) => m.role === 'user'))
    .map((b) => b.text ?? '')
    .join('\n');
  if (!isKickoff(kickoff) || toolsOf(body).size === 0) return null;
  const results = messages.flatMap((m) =>
    m.role === 'user'
      ? blocks(m)
          .filter((b) => b.type === 'tool_result')
          .map(text)
      : [],
  );
  return { kickoff, results };
}

export const anthropic: Adapter = {
  name: 'anthropic',
  handles: (method, path) => method === 'POST' && path === '/v1/messages',
  conversation: (request) => conversationOf((request.body ?? {}) as Body),
  respond(request: ModelRequest, res: ServerResponse) {
    const body = (request.body ?? {}) as Body;
    const messages = body.messages ?? [];
    const content = toBlock(turnFor(conversationOf(body)), toolsOf(body), messages.length);
    const model = body.model ?? 'claude-scripted';
    const usage = {
      input_tokens: 100 + messages.length,
      output_tokens: 20,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
    };
    const stop = content.type === 'tool_use' ? 'tool_use' : 'end_turn';
    if (!body.stream)
      return json(res, 200, {
        id: `msg_${request.at}`,
        type: 'message',
        role: 'assistant',
        model,
        content: [content],
        stop_reason: stop,
        stop_sequence: null,
        usage,
      });
    const start =
      content.type === 'tool_use'
        ? { type: 'tool_use', id: content.id, name: content.name, input: {} }
        : { type: 'text', text: '' };
    const delta =
      content.type === 'tool_use'
        ? { type: 'input_json_delta', partial_json: JSON.stringify(content.input) }
        : { type: 'text_delta', text: content.text };
    sse(res, [
      {
        event: 'message_start',
        data: {
          type: 'message_start',
          message: {
            id: `msg_${request.at}`,
            type: 'message',
            role: 'assistant',
            model,
            content: [],
            stop_reason: null,
            stop_sequence: null,
            usage: { ...usage, output_tokens: 1 },
          },
        },
      },
      { event: 'content_block_start', data: { type: 'content_block_start', index: 0, content_block: start } },
      { event: 'content_block_delta', data: { type: 'content_block_delta', index: 0, delta } },
      { event: 'content_block_stop', data: { type: 'content_block_stop', index: 0 } },
      {
        event: 'message_delta',
        data: {
          type: 'message_delta',
          delta: { stop_reason: stop, stop_sequence: null },
          usage: { output_tokens: usage.output_tokens },
        },
      },
      { event: 'message_stop', data: { type: 'message_stop' } },
    ]);
  },
};

/** Tool call ids unique across the sessions this server answers. */
let calls = 0;

/** The turn as a content block, through the tools this request offers (Claude Code's Bash, Read, Write). */
function toBlock(turn: Turn, tools: ReadonlySet<string>, n: number): Block {
  const id = `toolu_${String(n).padStart(4, '0')}_${++calls}`;
  switch (turn.kind) {
    case 'final':
      return { type: 'text', text: turn.text };
    case 'bash':
      return { type: 'tool_use', id, name: 'Bash', input: { command: turn.command, description: 'Run a command' } };
    case 'read':
      return tools.has('Read')
        ? { type: 'tool_use', id, name: 'Read', input: { file_path: turn.path } }
        : { type: 'tool_use', id, name: 'Bash', input: { command: `cat '${turn.path}'`, description: 'Read a file' } };
    case 'write':
      return tools.has('Write')
        ? { type: 'tool_use', id, name: 'Write', input: { file_path: turn.path, content: turn.content } }
        : {
            type: 'tool_use',
            id,
            name: 'Bash',
            input: {
              command: `mkdir -p "$(dirname '${turn.path}')" && cat > '${turn.path}' <<'EOF'\n${turn.content}EOF`,
              description: 'Write a file',
            },
          };
  }
}
