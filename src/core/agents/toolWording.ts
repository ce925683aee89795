/**
 * A refusal in the words of the agents' tools. The store words its refusals for the CLI, the front
 * end most callers use ("pass --step ANCHOR"); the tools name the same inputs differently (the
 * `step` argument) and cannot force a completion. Rather than thread the front end through every
 * message, the tool layer (the MCP server and the editor's tools both go through runTool) rewrites
 * the few CLI phrases a tool's refusal can carry, as lostReplies.ts rewrites "run the same command
 * again" into "call the tool again": one table, one entry per phrase. A store message whose phrase
 * changes fails test/helpers/toolRefusalSuite.ts, which drives each of these refusals through the
 * tools on both backends. docs/agents.md, "Tools for editor agents and MCP clients".
 */
const CLI_PHRASES: readonly (readonly [string, string])[] = [
  ['pass --step ANCHOR', 'pass the step argument'],
  ['--plan PATH', 'the plan argument'],
  ['finish them or pass --force <reason>', 'tick them with springfield_update_items first'],
];

/** `message` with the CLI's flags replaced by the tools' argument names. */
export function toolWording(message: string): string {
  return CLI_PHRASES.reduce((m, [cli, tool]) => m.replaceAll(cli, tool), message);
}
