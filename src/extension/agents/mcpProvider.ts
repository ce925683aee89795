import { join } from 'node:path';
import * as vscode from 'vscode';
import { VERSION } from '../../cli/help.ts';

/**
 * Offers `springfield mcp` to the editor's MCP clients (agent mode lists its tools), run by this
 * extension host's own runtime in the workspace folder, as agent `vscode-mcp`, on the editor's database.
 */
export function registerMcpServer(extensionPath: string, databaseUrl: () => string | undefined): vscode.Disposable {
  const cli = join(extensionPath, 'dist', 'cli.cjs');
  return vscode.lm.registerMcpServerDefinitionProvider('springfield.mcp', {
    provideMcpServerDefinitions: () => {
      const folder = vscode.workspace.workspaceFolders?.[0];
      if (!folder || folder.uri.scheme !== 'file') return [];
      const url = databaseUrl();
      const env = {
        ELECTRON_RUN_AS_NODE: '1',
        SPRINGFIELD_AGENT: 'vscode-mcp',
        ...(url ? { SPRINGFIELD_DATABASE_URL: url } : {}),
      };
      const server = new vscode.McpStdioServerDefinition('Springfield', process.execPath, [cli, 'mcp'], env, VERSION);
      server.cwd = folder.uri;
      return [server];
    },
  });
}
