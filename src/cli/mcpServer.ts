import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  ListToolsRequestSchema,
  type CallToolResult,
} from '@modelcontextprotocol/sdk/types.js';
import { primeText, SpringfieldError } from '../core/index.ts';
// The tools' own public API, not core/index.ts: their schemas are written in the full zod, which
// through the index would load with every command (docs/cli-cost.md, "The full CLI").
import { runTool, TOOL_META, toolJsonSchema, type ToolKey, toolKeyOf, type ToolSession } from '../core/agents/tools.ts';
import { VERSION } from './help.ts';
import { messageOf } from '../shared/errorMessage.ts';

export { LostReplies } from '../core/agents/tools.ts';

/**
 * The Springfield tools over MCP. Bad arguments and unknown tools are protocol errors (-32602) and
 * write nothing; a call the rules refuse (not the holder, open items, …) is a tool result with
 * isError, so the model reads why. The session is built per call: the repository may change under it.
 */
export function createMcpServer(session: () => ToolSession): Server {
  const server = new Server(
    { name: 'springfield', version: VERSION },
    { capabilities: { tools: {} }, instructions: primeText() },
  );
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: (Object.keys(TOOL_META) as ToolKey[]).map((key) => ({
      name: TOOL_META[key].name,
      title: TOOL_META[key].title,
      description: TOOL_META[key].description,
      inputSchema: toolJsonSchema(key) as { type: 'object' },
      annotations: { readOnlyHint: TOOL_META[key].readOnly, destructiveHint: false, openWorldHint: false },
    })),
  }));
  server.setRequestHandler(CallToolRequestSchema, async (request): Promise<CallToolResult> => {
    const key = toolKeyOf(request.params.name);
    if (!key)
      throw new InvalidParams(
        `unknown tool '${request.params.name}' (tools: ${Object.values(TOOL_META)
          .map((t) => t.name)
          .join(', ')})`,
      );
    try {
      const r = await runTool(key, request.params.arguments ?? {}, session());
      return { content: [{ type: 'text', text: r.text }], structuredContent: { result: r.data } };
    } catch (err) {
      if (err instanceof SpringfieldError && err.code === 'bad_tool_input') throw new InvalidParams(err.message);
      const message =
        err instanceof SpringfieldError ? `${err.code}: ${err.message}` : `internal error: ${messageOf(err)}`;
      return { content: [{ type: 'text', text: message }], isError: true };
    }
  });
  return server;
}

/**
 * A -32602 error whose message is the bare reason. The SDK sends a thrown error's `code` and
 * `message` as they are, and the client's SDK prefixes "MCP error <code>: " when it rebuilds the
 * error; an McpError thrown here already carries that prefix, so the client would show it twice.
 */
class InvalidParams extends Error {
  readonly code = ErrorCode.InvalidParams;
}

/** Serves until the transport closes (the client ends the stdio session). */
export async function serveMcp(server: Server, transport: Transport): Promise<void> {
  const closed = new Promise<void>((resolve) => {
    server.onclose = () => resolve();
  });
  await server.connect(transport);
  await closed;
}
