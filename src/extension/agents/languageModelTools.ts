import * as vscode from 'vscode';
import { UsageError } from '../../core/index.ts';
import {
  confirmationFor,
  LostReplies,
  runTool,
  TOOL_META,
  type ToolKey,
  type ToolSession,
} from '../../core/agents/tools.ts';
import { renderContext } from '../../cli/render/contextText.ts';
import type { StoreHost } from '../storeHost.ts';

/** The agent id recorded for claims and signals made by an editor agent through these tools. */
export const EDITOR_AGENT_ID = 'vscode-agent';

/**
 * The Springfield tools for VS Code's agent mode and chat participants (`vscode.lm.registerTool`):
 * the same implementations as `springfield mcp`, acting for this window's worktree; every tool that
 * writes asks the person first (prepareInvocation).
 */
export function registerLanguageModelTools(host: StoreHost): vscode.Disposable[] {
  // Kept for the window's life: a claim or signal whose reply was lost is resumed by the same call again.
  const lostReplies = new LostReplies();
  return (Object.keys(TOOL_META) as ToolKey[]).map((key) =>
    vscode.lm.registerTool<unknown>(TOOL_META[key].name, {
      prepareInvocation(options) {
        const confirm = confirmationFor(key, options.input, actorOf(host));
        return {
          invocationMessage: `Springfield: ${TOOL_META[key].title.replace(/^Springfield /, '')}`,
          ...(confirm
            ? { confirmationMessages: { title: confirm.title, message: new vscode.MarkdownString(confirm.message) } }
            : {}),
        };
      },
      async invoke(options) {
        const outcome = await runTool(key, options.input, sessionOf(host, lostReplies));
        if (!TOOL_META[key].readOnly) void host.refresh();
        return new vscode.LanguageModelToolResult([new vscode.LanguageModelTextPart(outcome.text)]);
      },
    }),
  );
}

function actorOf(host: StoreHost) {
  return { worktree: host.actor.worktree, agent: EDITOR_AGENT_ID, token: null };
}

function sessionOf(host: StoreHost, lostReplies: LostReplies): ToolSession {
  const location = host.location;
  if (!location) throw new UsageError('no_repo', 'Springfield needs a folder inside a git repository');
  return {
    location,
    actor: actorOf(host),
    env: process.env,
    renderContext,
    lostReplies,
    withStore: (fn) => fn(host.writable()),
  };
}
