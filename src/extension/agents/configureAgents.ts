import { existsSync } from 'node:fs';
import * as vscode from 'vscode';
import { AGENT_PRESETS, allowWrittenConfig, configPathFor, detectAgentClis, ensureGitignored, findPreset, PRESET_ROLES, type PresetRole, presetRoles, presetUsage, trustStatus, trustTargetFor, UsageError, writeConfigTemplate, writeRoleCommands } from '../../core/index.ts';
import { ROLE_REGISTRY } from '../../shared/roles.ts';
import type { StoreHost } from '../storeHost.ts';

/** "Lisa (plans)". */
const roleLabel = (role: PresetRole): string => `${ROLE_REGISTRY[role].name} (${ROLE_REGISTRY[role].does})`;
/** "Lisa, Ralph and Bart". */
const PLAYERS = PRESET_ROLES.map((r) => ROLE_REGISTRY[r].name).join(', ').replace(/, ([^,]*)$/, ' and $1');
const TEMPLATE = 'template';

/**
 * "Configure agents…": pick a preset (the CLIs found on PATH first) and the roles it plays, written
 * into .springfield/config.json as `springfield agents use` does; or create/open the file from a template.
 */
export async function configureAgents(host: StoreHost): Promise<void> {
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
  const pick = await vscode.window.showQuickPick([
    ...items,
    { id: '', label: '', kind: vscode.QuickPickItemKind.Separator, found: false },
    { id: TEMPLATE, label: '$(json) config.json template', description: existsSync(configPath) ? 'open .springfield/config.json' : 'create .springfield/config.json with every setting', found: false },
  ], { title: `Configure agents: which CLI plays ${PLAYERS}?`, placeHolder: 'Agent CLIs found on PATH are listed first', matchOnDescription: true });
  if (!pick) return;
  if (pick.id === TEMPLATE) {
    const preset = items.find((i) => i.found)?.id ?? 'claude';
    const r = writeConfigTemplate(configPath, presetRoles(preset));
    if (r.created) ensureGitignored(location);
    await vscode.window.showTextDocument(vscode.Uri.file(configPath));
    return;
  }
  const preset = findPreset(pick.id);
  if (!preset) return;
  const supported = PRESET_ROLES.filter((r) => preset.roles[r]);
  let role: PresetRole | undefined;
  if (supported.length > 1) {
    const scope = await vscode.window.showQuickPick([
      { label: `All roles (${supported.map(roleLabel).join(', ')})`, role: undefined as PresetRole | undefined },
      ...supported.map((r) => ({ label: roleLabel(r), role: r as PresetRole | undefined })),
    ], { title: `Configure agents: ${preset.name} plays…` });
    if (!scope) return;
    role = scope.role;
  }
  const target = trustTargetFor(location, location.dbPath, process.env);
  const before = trustStatus(target);
  const chosen = presetRoles(preset.id, role);
  const written = writeRoleCommands(configPath, chosen, presetUsage(preset.id, chosen));
  const allowed = allowWrittenConfig(target, before, written.content);
  if (written.created) ensureGitignored(location);
  const overridden = Object.keys(vscode.workspace.getConfiguration('springfield').get<Record<string, unknown>>('roles', {})).length > 0;
  const roles = Object.keys(written.roles).map((r) => roleLabel(r as PresetRole)).join(', ');
  const notes = [
    ...(pick.found ? [] : [`${preset.program} is not on PATH yet: ${preset.install}.`]),
    ...(preset.caveat ? [preset.caveat] : []),
    ...(overridden ? ['The springfield.roles setting overrides this file in this editor.'] : []),
    ...(allowed ? [] : ["The rest of the file was never allowed by you: the scheduler will show it and ask before it runs anything."]),
  ];
  const message = `${preset.name} now plays ${roles} (.springfield/config.json).${notes.length ? ` ${notes.join(' ')}` : ''}`;
  const show = notes.length ? vscode.window.showWarningMessage : vscode.window.showInformationMessage;
  void show(message, 'Open config.json').then((choice) => {
    if (choice) void vscode.window.showTextDocument(vscode.Uri.file(configPath));
  });
}
