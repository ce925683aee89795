import { existsSync } from 'node:fs';
import { join } from 'node:path';
import * as vscode from 'vscode';
import {
  AGENT_PRESETS,
  allowWrittenConfig,
  configPathFor,
  configuredVerification,
  DEMO_AGENTS,
  detectTestCommand,
  demoRoles,
  detectAgentClis,
  ensureGitignored,
  findPreset,
  PRESET_ROLES,
  presetFallbacks,
  type PresetRole,
  presetRoles,
  presetUsage,
  trustStatus,
  trustTargetFor,
  UsageError,
  writeConfigTemplate,
  writeRoleCommands,
} from '../../core/index.ts';
import { ROLE_REGISTRY } from '../../shared/roles.ts';
import type { StoreHost } from '../storeHost.ts';
import { fallbackOptions, fallbackTitle } from '../model/fallbackChoice.ts';

/** "Lisa (plans)". */
const roleLabel = (role: PresetRole): string => `${ROLE_REGISTRY[role].name} (${ROLE_REGISTRY[role].does})`;
/** "Lisa, Ralph and Bart". */
const PLAYERS = PRESET_ROLES.map((r) => ROLE_REGISTRY[r].name)
  .join(', ')
  .replace(/, ([^,]*)$/, ' and $1');
const TEMPLATE = 'template';

/** What a pick writes: a preset's commands and usage readers, or the demo agents'. */
interface Choice {
  readonly name: string;
  /** "plays" (one CLI) or "play" (the demo agents). */
  readonly verb: string;
  readonly program: string;
  readonly install: string;
  readonly caveat: string | undefined;
  readonly supported: readonly PresetRole[];
  roles(role: PresetRole | undefined): Partial<Record<PresetRole, readonly string[]>>;
  usage(roles: Partial<Record<PresetRole, unknown>>): Partial<Record<PresetRole, string | null>>;
}

/**
 * "Configure agents…": pick a preset (the CLIs found on PATH first), or the demo agents this extension
 * ships (no model: the stand-in agent run by the editor's runtime), and the roles it plays, written
 * into .springfield/config.json as `springfield agents use` does; or create/open the file from a template.
 */
export async function configureAgents(host: StoreHost, extensionPath: string): Promise<void> {
  const location = host.location;
  if (!location) throw new UsageError('no_repo', 'open a folder inside a git repository to configure agents');
  const configPath = configPathFor(location.dbPath);
  const found = detectAgentClis(process.env);
  const items = AGENT_PRESETS.map((p) => {
    const cli = found.find((f) => f.preset === p.id);
    return {
      id: p.id,
      label: `${cli?.path ? '$(pass-filled)' : '$(circle-large-outline)'} ${p.name}`,
      description: cli?.path ? `${p.program} ${cli.version ?? ''} on PATH`.trim() : `${p.program} not on PATH`,
      detail: p.caveat ?? `${p.permissions} · flags checked with ${p.checkedVersion}`,
      found: Boolean(cli?.path),
    };
  }).sort((a, b) => Number(b.found) - Number(a.found));
  const demo = {
    id: DEMO_AGENTS.id,
    label: `$(beaker) ${DEMO_AGENTS.name} (${DEMO_AGENTS.summary})`,
    description: 'try the scheduler without an agent subscription',
    detail: 'Lisa proposes an example plan, Ralph writes a file for each step and commits it, Bart passes the review',
    found: true,
  };
  const pick = await vscode.window.showQuickPick(
    [
      ...items,
      { id: '', label: '', kind: vscode.QuickPickItemKind.Separator, found: false },
      demo,
      {
        id: TEMPLATE,
        label: '$(json) config.json template',
        description: existsSync(configPath)
          ? 'open .springfield/config.json'
          : 'create .springfield/config.json with every setting',
        found: false,
      },
    ],
    {
      title: `Configure agents: which CLI plays ${PLAYERS}?`,
      placeHolder: 'Agent CLIs found on PATH are listed first',
      matchOnDescription: true,
    },
  );
  if (!pick) return;
  if (pick.id === TEMPLATE) {
    const preset = items.find((i) => i.found)?.id ?? 'claude';
    const r = writeConfigTemplate(configPath, presetRoles(preset));
    if (r.created) ensureGitignored(location);
    await vscode.window.showTextDocument(vscode.Uri.file(configPath));
    return;
  }
  const choice = pick.id === DEMO_AGENTS.id ? demoChoice(extensionPath) : presetChoice(pick.id);
  if (!choice) return;
  const supported = choice.supported;
  let role: PresetRole | undefined;
  if (supported.length > 1) {
    const scope = await vscode.window.showQuickPick(
      [
        { label: `All roles (${supported.map(roleLabel).join(', ')})`, role: undefined as PresetRole | undefined },
        ...supported.map((r) => ({ label: roleLabel(r), role: r as PresetRole | undefined })),
      ],
      { title: `Configure agents: ${choice.name} ${choice.verb}…` },
    );
    if (!scope) return;
    role = scope.role;
  }
  // A preset (not the demo agents) may hand its roles to another while it is limited (docs/agents.md, "Fallbacks").
  let fallback: string | null = null;
  if (pick.id !== DEMO_AGENTS.id) {
    const onPath = new Set(found.filter((f) => f.path).map((f) => f.preset));
    const next = await vscode.window.showQuickPick(fallbackOptions(pick.id, role, onPath), {
      title: `Configure agents: ${fallbackTitle(pick.id)}`,
      placeHolder: 'While the first preset is limited or cannot run, its roles run on this one',
      matchOnDescription: true,
    });
    if (!next) return;
    fallback = next.id;
  }
  const verification = await proposeVerification(configPath, location.mainRoot ?? location.worktreeRoot);
  if (verification === null) return;
  const target = trustTargetFor(location, location.dbPath, process.env);
  const before = trustStatus(target);
  const chosen = choice.roles(role);
  const fallbacks =
    pick.id === DEMO_AGENTS.id ? undefined : presetFallbacks(pick.id, fallback ? [fallback] : [], chosen, role);
  const written = writeRoleCommands(configPath, chosen, choice.usage(chosen), verification, fallbacks);
  const allowed = allowWrittenConfig(target, before, written.content);
  if (written.created) ensureGitignored(location);
  const overridden =
    Object.keys(vscode.workspace.getConfiguration('springfield').get<Record<string, unknown>>('roles', {})).length > 0;
  const roles = Object.keys(written.roles)
    .map((r) => roleLabel(r as PresetRole))
    .join(', ');
  const notes = [
    ...(pick.found ? [] : [`${choice.program} is not on PATH yet: ${choice.install}.`]),
    ...(choice.caveat ? [choice.caveat] : []),
    ...(overridden ? ['The springfield.roles setting overrides this file in this editor.'] : []),
    ...(allowed
      ? []
      : ['The rest of the file was never allowed by you: the scheduler will show it and ask before it runs anything.']),
  ];
  const verifies = verification
    ? ` Each build is verified with ${verification.map((c) => c.join(' ')).join(', ')}.`
    : '';
  const then = fallback ? `, then ${findPreset(fallback)?.name ?? fallback} while it is limited` : '';
  const message = `${choice.name} now ${choice.verb} ${roles}${then} (.springfield/config.json).${verifies}${notes.length ? ` ${notes.join(' ')}` : ''}`;
  const show = notes.length ? vscode.window.showWarningMessage : vscode.window.showInformationMessage;
  void show(message, 'Open config.json').then((answer) => {
    if (answer) void vscode.window.showTextDocument(vscode.Uri.file(configPath));
  });
}

/**
 * With no verification configured yet, proposes the repository's own test command (package.json's
 * test script → npm test, a Makefile's test target, cargo test, go test ./..., pytest): the person
 * confirms it or not; nothing runs here. Returns the commands to write, undefined to leave the file's
 * as they are, or null when the person cancelled.
 */
async function proposeVerification(
  configPath: string,
  root: string | null,
): Promise<readonly (readonly string[])[] | undefined | null> {
  if (!root || configuredVerification(configPath).length > 0) return undefined;
  const found = detectTestCommand(root);
  if (!found) return undefined;
  const command = found.argv.join(' ');
  const pick = await vscode.window.showQuickPick(
    [
      {
        label: `$(check) Verify with ${command}`,
        description: `found in ${found.source}`,
        detail: 'Runs after each build and before the merge; a failure sends the work back to Ralph.',
        use: true,
      },
      {
        label: '$(circle-slash) No verification for now',
        description: 'add one later: "verification" in .springfield/config.json',
        use: false,
      },
    ],
    { title: `Configure agents: verify each build with ${command}?`, ignoreFocusOut: true },
  );
  if (!pick) return null;
  return pick.use ? [found.argv] : undefined;
}

function presetChoice(id: string): Choice | undefined {
  const preset = findPreset(id);
  if (!preset) return undefined;
  return {
    name: preset.name,
    verb: 'plays',
    program: preset.program,
    install: preset.install,
    caveat: preset.caveat,
    supported: PRESET_ROLES.filter((r) => preset.roles[r]),
    roles: (role) => presetRoles(preset.id, role),
    usage: (roles) => presetUsage(preset.id, roles),
  };
}

/** The stand-in agent this extension ships (dist/standInAgent.cjs), run by the editor's own runtime. */
function demoChoice(extensionPath: string): Choice {
  const script = join(extensionPath, 'dist', DEMO_AGENTS.file);
  return {
    name: DEMO_AGENTS.name,
    verb: 'play',
    program: '',
    install: '',
    caveat: undefined,
    supported: PRESET_ROLES,
    roles: (role) => demoRoles(process.execPath, script, role),
    usage: (roles) => Object.fromEntries(Object.keys(roles).map((r) => [r, null])),
  };
}
