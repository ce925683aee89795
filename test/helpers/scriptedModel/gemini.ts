// The Gemini API as Gemini CLI calls it (GOOGLE_GEMINI_BASE_URL with an API key):
// POST /v1beta/models/<model>:streamGenerateContent?alt=sse for the agent's turns, :generateContent
// for its utility calls (the model router: no tools, a JSON schema to answer), :countTokens. The
// conversation that began with Springfield's kickoff is played by roleScript.ts through Gemini CLI's
// own tools: run_shell_command, read_file, write_file.
import type { ServerResponse } from 'node:http';
import { isKickoff, turnFor, type Conversation, type Turn } from './roleScript.ts';
import { json, sse, type Adapter, type ModelRequest } from './server.ts';

interface Part {
  text?: string;
  functionCall?: { name: string; args: unknown };
  functionResponse?: { name: string; response?: { output?: string; error?: string } };
}
interface Body {
  contents?: { role?: string; parts?: Part[] }[];
  tools?: { functionDeclarations?: { name: string }[] }[];
  generationConfig?: { responseJsonSchema?: { properties?: Record<string, { type?: string; enum?: string[] }> } };
}

/** A tool's result as the model reads it: run_shell_command wraps what the command printed in `Output: …` and a process-group note. */
function resultOf(p: Part): string {
  const r = p.functionResponse?.response ?? {};
  const text = r.output ?? r.error ?? '';
  const out =
    /(?:^|\n)Output: ([\s\S]*?)(?:\n(?:Error|Exit Code|Signal|Background PIDs|Process Group PGID):|\n<\/untrusted_context>|$)/.exec(
      text,
    );
  return out ? (out[1] ?? '') : text;
}

const toolsOf = (body: Body): Set<string> =>
  new Set((body.tools ?? []).flatMap((t) => t.functionDeclarations ?? []).map((d) => d.name));

/** Springfield's kickoff and the tool results so far, for a request of that conversation with tools offered. */
function conversationOf(body: Body): Conversation | null {
  const parts = (body.contents ?? []).flatMap((c) => c.parts ?? []);
  const kickoff = parts.map((p) => p.text ?? '').find(isKickoff);
  if (!kickoff || toolsOf(body).size === 0) return null;
  return { kickoff, results: parts.filter((p) => p.functionResponse).map(resultOf) };
}

export const gemini: Adapter = {
  name: 'gemini',
  handles: (method, path) =>
    method === 'POST' && /^\/v1beta\/models\/[^/:]+:(streamGenerateContent|generateContent|countTokens)$/.test(path),
  conversation: (request) => conversationOf((request.body ?? {}) as Body),
  respond(request: ModelRequest, res: ServerResponse) {
    const body = (request.body ?? {}) as Body;
    const usageMetadata = { promptTokenCount: 100, candidatesTokenCount: 20, totalTokenCount: 120 };
    if (request.path.includes(':countTokens')) return json(res, 200, { totalTokens: 100 });
    const schema = body.generationConfig?.responseJsonSchema?.properties;
    if (schema) {
      // A utility call (the router): the smallest answer its schema accepts.
      const answer = Object.fromEntries(
        Object.entries(schema).map(([k, v]) => [
          k,
          v.enum?.[0] ??
            (/score/.test(k)
              ? 1
              : /confidence/.test(k)
                ? 0
                : k === 'next_speaker'
                  ? 'user'
                  : v.type === 'INTEGER' || v.type === 'NUMBER'
                    ? 1
                    : 'simple'),
        ]),
      );
      return json(res, 200, {
        candidates: [
          { content: { role: 'model', parts: [{ text: JSON.stringify(answer) }] }, finishReason: 'STOP', index: 0 },
        ],
        usageMetadata,
      });
    }
    const part = toPart(turnFor(conversationOf(body)), toolsOf(body));
    const chunk = {
      candidates: [{ content: { role: 'model', parts: [part] }, finishReason: 'STOP', index: 0 }],
      usageMetadata,
      modelVersion: 'gemini-scripted',
    };
    if (request.path.includes(':generateContent')) return json(res, 200, chunk);
    sse(res, [{ data: chunk }]);
  },
};

function toPart(turn: Turn, tools: ReadonlySet<string>): Part {
  const shell = (command: string): Part => ({
    functionCall: { name: 'run_shell_command', args: { command, description: 'Run a command' } },
  });
  switch (turn.kind) {
    case 'final':
      return { text: turn.text };
    case 'bash':
      return shell(turn.command);
    case 'read':
      return tools.has('read_file')
        ? { functionCall: { name: 'read_file', args: { file_path: turn.path } } }
        : shell(`cat '${turn.path}'`);
    case 'write':
      return tools.has('write_file')
        ? { functionCall: { name: 'write_file', args: { file_path: turn.path, content: turn.content } } }
        : shell(`cat > '${turn.path}' <<'EOF'\n${turn.content}EOF`);
  }
}
