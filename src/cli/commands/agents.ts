import { existsSync, realpathSync } from 'node:fs';
import { dirname, join } from 'node:path';
import {
  AGENT_PRESETS,
  allowWrittenConfig,
  preflight,
  configPathFor,
  DEMO_AGENTS,
  demoRoles,
  detectAgentClis,
  ensureGitignored,
  findPreset,
  PRESET_ROLES,
  type PresetRole,
  presetFallbacks,
  presetRoles,
  presetUsage,
  trustStatus,
  trustTargetFor,
  UsageError,
  writeRoleCommands,
  clock,
  limitOf,
} from '../../core/index.ts';
import { list, str } from '../args.ts';
import { arg, type Command } from '../command.ts';
import { output } from '../output.ts';

export const agentsCommand: Command = {
  name: 'agents',
  summary: 'the agent CLIs found on PATH and the presets Springfield knows for them',
  positionals: [],
  options: [],
  details: [
    'Versions are read from the installed package, without starting the CLI. Each CLI found is checked as the scheduler',
    'checks it before its first run (its own status command, no token spent): "ready", or why it cannot run (not logged in).',
    `Use one: springfield agents use <preset> [--role ${PRESET_ROLES.join('|')}] [--fallback <preset>]…`,
    'A preset that met a usage limit shows "limited until HH:MM": no run of it starts on this host before then.',
    `No agent CLI yet? springfield agents use ${DEMO_AGENTS.id}: ${DEMO_AGENTS.name.toLowerCase()} (${DEMO_AGENTS.summary}).`,
  ].join('\n'),
  async run(ctx) {
    const found = detectAgentClis(ctx.env);
    const cwd = ctx.location.worktreeRoot ?? ctx.location.commonDir;
    const checks = await Promise.all(
      AGENT_PRESETS.map((p) =>
        found.find((f) => f.preset === p.id)?.path ? preflight([p.program], ctx.env, cwd) : null,
      ),
    );
    const presets = AGENT_PRESETS.map((p, i) => {
      const cli = found.find((f) => f.preset === p.id);
      const limit = limitOf(ctx.env, p.id);
      return {
        id: p.id,
        name: p.name,
        program: p.program,
        found: cli?.path != null,
        path: cli?.path ?? null,
        version: cli?.version ?? null,
        ready: checks[i] ? checks[i].reason === null : false,
        unavailable: checks[i]?.reason ?? null,
        checked_version: p.checkedVersion,
        roles: Object.keys(p.roles),
        permissions: p.permissions,
        install: p.install,
        usage_output: p.usage ? p.usage.format : null,
        caveat: p.caveat ?? null,
        limited_until: limit?.until ?? null,
        limit_message: limit?.message ?? null,
        commands: p.roles,
      };
    });
    const width = Math.max(...presets.map((p) => p.id.length)) + 2;
    const lines = presets.map((p) => {
      const state = p.unavailable ? ` · ${p.unavailable}` : p.found ? ' · ready' : '';
      const limited = p.limited_until
        ? Date.parse(p.limited_until) > Date.now()
          ? ` · limited until ${clock(p.limited_until)} on this host`
          : ' · limit passed: its next run tries it'
        : '';
      const where = p.found
        ? `found ${p.path}${p.version ? `, version ${p.version}` : ''}${state}`
        : `not on PATH (install: ${p.install})`;
      const roles = p.roles.length < PRESET_ROLES.length ? ` · ${p.roles.join(', ')} only` : '';
      return `  ${p.found ? '●' : '○'} ${p.id.padEnd(width)}${p.name} (flags checked with ${p.checked_version}) · ${where}${roles}${limited}`;
    });
    const script = demoScript();
    const demo = {
      id: DEMO_AGENTS.id,
      name: DEMO_AGENTS.name,
      summary: DEMO_AGENTS.summary,
      script,
      found: existsSync(script),
    };
    const text = [
      'Agent presets:',
      ...lines,
      `  ${demo.found ? '●' : '○'} ${demo.id.padEnd(width)}${demo.name} (${demo.summary}) · ${demo.found ? script : `missing: ${script}`}`,
      '',
      `Use one for every role: springfield agents use <preset>   (one role: --role ${PRESET_ROLES.join('|')})`,
    ].join('\n');
    return output({ presets, demo }, text);
  },
};

export const agentsUseCommand: Command = {
  name: 'agents use',
  summary: "write a preset's role commands and usage readers into .springfield/config.json (other settings are kept)",
  positionals: [
    {
      name: 'preset',
      required: true,
      description: `one of ${AGENT_PRESETS.map((p) => p.id).join(', ')}, or ${DEMO_AGENTS.id} (${DEMO_AGENTS.summary})`,
    },
  ],
  options: [
    {
      name: 'role',
      type: 'string',
      placeholder: 'ROLE',
      description: `only this role: ${PRESET_ROLES.join('|')} (default: every role the preset fills)`,
    },
    {
      name: 'fallback',
      type: 'string',
      multiple: true,
      placeholder: 'PRESET',
      description:
        'a preset the roles run on while this one is limited or cannot run, in the order given (none: the roles have no fallback)',
    },
  ],
  details: [
    'The file is created if absent; an existing one keeps its other keys. A symbolic link is refused.',
    'Each role also gets the preset\'s usage reader ("usage": {"ralph": "claude"}), so cost and tokens are kept per run;',
    "a preset whose CLI reports none removes the role's reader.",
    'Editor settings (springfield.roles) win over the file. You chose these commands, so the file counts as allowed',
    "(see 'springfield allow') when it did not exist or you had allowed it; otherwise review the rest with 'springfield allow'.",
    `'${DEMO_AGENTS.id}' writes the demo agents: this runtime running the stand-in agent installed beside this CLI`,
    `(${DEMO_AGENTS.file}) on the run's context file, for each role it writes; no model, no account, no usage reader.`,
  ].join('\n'),
  async run(ctx) {
    const id = arg(ctx, 0);
    const demo = id === DEMO_AGENTS.id;
    const roles = demo
      ? demoRoles(process.execPath, demoScript(), str(ctx.args, 'role'))
      : presetRoles(id, str(ctx.args, 'role'));
    const preset = findPreset(id);
    const target = trustTargetFor(ctx.location, ctx.stateFile, ctx.env);
    const before = trustStatus(target);
    const usage = demo ? noUsage(roles) : presetUsage(id, roles);
    const fallbackIds = list(ctx.args, 'fallback');
    if (demo && fallbackIds.length > 0)
      throw new UsageError('bad_option', `--fallback goes with an agent preset, not ${DEMO_AGENTS.id}`);
    const fallbacks = presetFallbacks(id, fallbackIds, roles, str(ctx.args, 'role'));
    const written = writeRoleCommands(configPathFor(ctx.stateFile), roles, usage, undefined, fallbacks);
    const allowed = allowWrittenConfig(target, before, written.content);
    const ignored =
      written.created && !str(ctx.args, 'db') && !ctx.env.SPRINGFIELD_DB && ensureGitignored(ctx.location);
    const found = demo || detectAgentClis(ctx.env).some((f) => f.preset === id && f.path);
    const warnings = [
      ...(found ? [] : [`${preset?.program} is not on PATH yet: ${preset?.install}`]),
      ...(preset?.caveat ? [preset.caveat] : []),
      ...(allowed
        ? []
        : [
            `the rest of ${written.path} was not allowed by you, so nothing in it runs yet: review it with 'springfield allow'`,
          ]),
    ];
    const name = demo ? `${DEMO_AGENTS.name} (${DEMO_AGENTS.summary})` : preset?.name;
    const then = fallbackIds.length > 0 ? `, then ${fallbackIds.join(', ')} while it is limited or cannot run` : '';
    const text = `${written.created ? 'Created' : 'Updated'} ${written.path}: ${Object.keys(roles).join(', ')} → ${name}${then}${ignored ? ' (and added .springfield/ to .gitignore)' : ''}`;
    return output(
      { path: written.path, created: written.created, preset: id, roles: written.roles, fallbacks, usage, allowed },
      text,
      0,
      warnings,
    );
  },
};

/** The demo agents' bundle, beside this CLI's executable (dist/ of the repository, the npm package or the extension). */
function demoScript(): string {
  return join(dirname(realpathSync(process.argv[1] ?? '')), DEMO_AGENTS.file);
}

/** No usage reader for any of `roles`: the demo agents report no tokens or cost (a previous preset's reader is removed). */
function noUsage(roles: Partial<Record<PresetRole, unknown>>): Partial<Record<PresetRole, null>> {
  return Object.fromEntries(Object.keys(roles).map((role) => [role, null]));
}
