// The OpenAI Responses API as Codex CLI calls a custom model provider: POST /v1/responses, streamed.
// The conversation that began with Springfield's kickoff is played by roleScript.ts through Codex's
// own tools: `exec_command` for commands (Codex has no file-read tool: it reads with cat) and the
// freeform `apply_patch` for new files. Any other request (a compaction) gets a short text answer.
import type { ServerResponse } from 'node:http';
import { isKickoff, turnFor, type Conversation, type Turn } from './roleScript.ts';
import { sse, type Adapter, type ModelRequest } from './server.ts';

interface Item {
  type?: string;
  role?: string;
  content?: string | { type?: string; text?: string }[];
  output?: string;
}
interface Body {
  model?: string;
  input?: Item[];
  tools?: { name?: string }[];
}

const textOf = (i: Item): string =>
  typeof i.content === 'string' ? i.content : (i.content ?? []).map((c) => c.text ?? '').join('\n');
/** exec_command's result is a header (chunk id, wall time, exit code) then `Output:` and what the command printed. */
const outputOf = (i: Item): string => {
  const out = i.output ?? '';
  const at = out.indexOf('\nOutput:\n');
  return at < 0 ? out : out.slice(at + '\nOutput:\n'.length);
};
const toolsOf = (body: Body): Set<string> => new Set((body.tools ?? []).map((t) => t.name ?? ''));

/** Springfield's kickoff and the tool results so far, for a request of that conversation with tools offered. */
function conversationOf(body: Body): Conversation | null {
  const input = body.input ?? [];
  const kickoff = input
    .filter((i) => i.role === 'user')
    .map(textOf)
    .find(isKickoff);
  if (!kickoff || toolsOf(body).size === 0) return null;
  const outputs = input.filter((i) => i.type === 'function_call_output' || i.type === 'custom_tool_call_output');
  return { kickoff, results: outputs.map(outputOf) };
}

export const openaiResponses: Adapter = {
  name: 'openai-responses',
  handles: (method, path) => method === 'POST' && /\/responses$/.test(path),
  conversation: (request) => conversationOf((request.body ?? {}) as Body),
  respond(request: ModelRequest, res: ServerResponse) {
    const body = (request.body ?? {}) as Body;
    const input = body.input ?? [];
    const id = `resp_${request.at}`;
    const item = toItem(turnFor(conversationOf(body)), toolsOf(body), input.length);
    const usage = {
      input_tokens: 100 + input.length,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: 20,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: 120 + input.length,
    };
    sse(res, [
      {
        event: 'response.created',
        data: {
          type: 'response.created',
          sequence_number: 0,
          response: {
            id,
            object: 'response',
            created_at: Math.floor(request.at / 1000),
            model: body.model,
            status: 'in_progress',
            output: [],
          },
        },
      },
      {
        event: 'response.output_item.done',
        data: { type: 'response.output_item.done', sequence_number: 1, output_index: 0, item },
      },
      {
        event: 'response.completed',
        data: {
          type: 'response.completed',
          sequence_number: 2,
          response: { id, object: 'response', status: 'completed', output: [item], usage },
        },
      },
    ]);
  },
};

/** Tool call ids unique across the sessions this server answers. */
let calls = 0;

function toItem(turn: Turn, tools: ReadonlySet<string>, n: number): Record<string, unknown> {
  const callId = `call_${String(n).padStart(4, '0')}_${++calls}`;
  const exec = (cmd: string) => ({
    type: 'function_call',
    id: `fc_${callId}`,
    call_id: callId,
    name: 'exec_command',
    arguments: JSON.stringify({ cmd }),
    status: 'completed',
  });
  switch (turn.kind) {
    case 'final':
      return {
        type: 'message',
        id: `msg_${callId}`,
        role: 'assistant',
        status: 'completed',
        content: [{ type: 'output_text', text: turn.text, annotations: [] }],
      };
    case 'bash':
      return exec(turn.command);
    case 'read':
      return exec(`cat '${turn.path}'`);
    case 'write': {
      if (!tools.has('apply_patch'))
        return exec(`mkdir -p "$(dirname '${turn.path}')" && cat > '${turn.path}' <<'EOF'\n${turn.content}EOF`);
      const lines = turn.content
        .replace(/\n$/, '')
        .split('\n')
        .map((l) => `+${l}`)
        .join('\n');
      return {
        type: 'custom_tool_call',
        id: `ctc_${callId}`,
        call_id: callId,
        name: 'apply_patch',
        input: `*** Begin Patch\n*** Add File: ${turn.relative}\n${lines}\n*** End Patch\n`,
        status: 'completed',
      };
    }
  }
}
