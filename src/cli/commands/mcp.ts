import type { Command } from '../command.ts';

export const mcpCommand: Command = {
  name: 'mcp',
  summary: 'serve the Springfield tools to an MCP client over stdio (context, claim, update, commit, signal)',
  positionals: [],
  options: [],
  details: [
    'Started by the client, in the repository or worktree to work on, e.g.: claude mcp add springfield -- springfield mcp',
    'Claims and commits are made for the worktree it runs in, as agent --agent / SPRINGFIELD_AGENT (default: mcp).',
    'Stdout carries the protocol only; it ends when the client closes stdin.',
  ].join('\n'),
  async run(ctx) {
    // Loaded here, not at the top: the SDK stays out of every other command's start-up.
    const [{ createMcpServer, LostReplies, serveMcp }, { StdioServerTransport }, { toolSession }] = await Promise.all([
      import('../mcpServer.ts'),
      import('@modelcontextprotocol/sdk/server/stdio.js'),
      import('../toolSession.ts'),
    ]);
    // Kept for the life of the server: a claim or signal whose reply was lost is resumed by the same call again.
    const lostReplies = new LostReplies();
    const server = createMcpServer(() => toolSession(ctx, 'mcp', lostReplies));
    const transport = new StdioServerTransport();
    process.stdin.once('end', () => void server.close());
    await serveMcp(server, transport);
    // The protocol owned stdout: nothing more may be written there.
    return process.exit(0);
  },
};
