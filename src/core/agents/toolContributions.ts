import { TOOL_META, toolJsonSchema, type ToolKey } from './toolSchemas.ts';

const REFERENCE: Readonly<Record<ToolKey, { reference: string; icon: string; user: string }>> = {
  context: {
    reference: 'springfieldContext',
    icon: '$(book)',
    user: "What the agent needs for this worktree's Springfield step: intent, checklist, signals, next commands",
  },
  claim: {
    reference: 'springfieldClaim',
    icon: '$(play)',
    user: 'Claim the next ready step of a plan for this worktree',
  },
  update: {
    reference: 'springfieldUpdate',
    icon: '$(checklist)',
    user: 'Tick checklist items of the step this worktree holds',
  },
  commit: {
    reference: 'springfieldCommit',
    icon: '$(git-commit)',
    user: "Commit the worktree with Springfield's trailers and complete the step",
  },
  signal: {
    reference: 'springfieldSignal',
    icon: '$(eye)',
    user: "Record the reviewer's one typed signal for an implemented epic",
  },
};

/** `contributes.languageModelTools` of package.json, derived from the tool schemas (a test keeps them equal). */
export function languageModelToolContributions(): Record<string, unknown>[] {
  return (Object.keys(TOOL_META) as ToolKey[]).map((key) => ({
    name: TOOL_META[key].name,
    displayName: TOOL_META[key].title,
    toolReferenceName: REFERENCE[key].reference,
    canBeReferencedInPrompt: true,
    icon: REFERENCE[key].icon,
    tags: ['springfield'],
    userDescription: REFERENCE[key].user,
    modelDescription: TOOL_META[key].description,
    inputSchema: toolJsonSchema(key),
  }));
}
