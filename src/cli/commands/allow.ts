import {
  allowConfig,
  loadRoleCommands,
  revokeConfig,
  shellQuote,
  trustStatus,
  type TrustStatus,
  trustTargetFor,
  UsageError,
} from '../../core/index.ts';
import { flag } from '../args.ts';
import type { Command } from '../command.ts';
import { output } from '../output.ts';

export const allowCommand: Command = {
  name: 'allow',
  summary:
    "allow the commands this repository's .springfield/config.json names to run (recorded in your own state, asked again when the file changes)",
  positionals: [],
  options: [
    {
      name: 'show',
      type: 'boolean',
      description: 'only show what the config would run and whether it is allowed; record nothing',
    },
    { name: 'revoke', type: 'boolean', description: 'withdraw what you allowed for this repository' },
  ],
  details: [
    'A repository can bring its own .springfield/config.json (agent roles, verification, merge commands). orchestrate, run and',
    "the editor's scheduler run none of it until you allowed that exact content: allow records the file's sha256 in",
    '$XDG_STATE_HOME/springfield (else ~/.local/state/springfield), outside every repository; any change to the file asks again.',
  ].join('\n'),
  async run(ctx) {
    const show = flag(ctx.args, 'show');
    const revoke = flag(ctx.args, 'revoke');
    if (show && revoke) throw new UsageError('bad_option', 'allow takes --show or --revoke, not both');
    const target = trustTargetFor(ctx.location, ctx.stateFile, ctx.env);
    if (revoke) {
      const revoked = revokeConfig(target);
      return output(
        { revoked, repository: target.repository, config_path: target.configPath },
        revoked
          ? `Revoked: nothing from ${target.configPath} runs until you allow it again`
          : `Nothing was allowed for ${target.repository}`,
      );
    }
    const before = trustStatus(target);
    if (show || before.state === 'no_config') return output({ ...before, recorded: false }, describe(before, false));
    if (before.invalid !== null)
      throw new UsageError(
        'invalid_config',
        `${target.configPath}: invalid JSON: ${before.invalid}; fix it before allowing it`,
      );
    loadRoleCommands(target.configPath); // a config the scheduler would refuse is not worth allowing
    const after = allowConfig(target, before.hash ?? undefined);
    return output({ ...after, recorded: true, previously: before.state }, describe(after, true));
  },
};

function describe(s: TrustStatus, recorded: boolean): string {
  if (s.state === 'no_config')
    return `No ${s.config_path}: Springfield runs nothing from this repository, so there is nothing to allow.`;
  const width = Math.max(0, ...[...s.commands, ...s.settings].map((c) => c.key.length)) + 2;
  const lines = [`${s.config_path} (sha256 ${s.hash?.slice(0, 16)}…) would run:`];
  if (s.commands.length === 0) lines.push('  (no commands)');
  for (const c of s.commands) lines.push(`  ${c.key.padEnd(width)}${c.argv.map(shellQuote).join(' ')}`);
  const settings = s.settings.filter((x) => !s.commands.some((c) => c.key === x.key));
  if (settings.length > 0)
    lines.push('with these settings:', ...settings.map((x) => `  ${x.key.padEnd(width)}${JSON.stringify(x.value)}`));
  if (s.invalid) lines.push(`It is not valid JSON (${s.invalid}).`);
  if (recorded) {
    lines.push(
      `Allowed for ${s.repository}; kept in ${s.record_file}.`,
      "Springfield asks again when the file changes; 'springfield allow --revoke' withdraws it.",
    );
  } else {
    lines.push(
      s.allowed
        ? `Allowed (since ${s.allowed_at}).`
        : s.state === 'changed'
          ? "Not allowed: it changed since you allowed it. Allow this content with 'springfield allow'."
          : "Not allowed yet. Allow it with 'springfield allow'.",
    );
  }
  return lines.join('\n');
}
