/** Who acts on an epic: Marge is the person, the others agents (docs/agents.md). */
export const ROLES = ['marge', 'lisa', 'ralph', 'bart', 'lovejoy'] as const;
export type Role = (typeof ROLES)[number];

/** The roles an agent run can take (Marge is the person, never a command). */
export const AGENT_ROLES = ['lisa', 'ralph', 'bart', 'lovejoy'] as const;
export type AgentRole = (typeof AGENT_ROLES)[number];

/** Display names, the same in the CLI, the views and the webviews. */
export const ROLE_NAMES: Readonly<Record<Role, string>> = { marge: 'Marge', lisa: 'Lisa', ralph: 'Ralph', bart: 'Bart', lovejoy: 'Lovejoy' };
