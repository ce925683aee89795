// Installs the npm-published agent CLIs of the presets (src/core/runs/presets.ts), each at the
// version its flags were checked against, into .cache/agent-clis once (under a lock, with the
// project's Node 24 npm), so a test can read their --help. Only the install scripts that link a
// CLI's own platform binary run; native add-ons the help does not need are not built.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { delimiter, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AGENT_PRESETS } from '../src/core/runs/presets.ts';
import { cleanEnv, firstCause, node24, npmCli, withLock } from './codeServer.ts';

const projectRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** `package@version` for every preset published on npm. */
export const AGENT_CLI_PACKAGES: readonly string[] = AGENT_PRESETS.flatMap((p) =>
  p.npm ? [`${p.npm}@${p.checkedVersion}`] : [],
);

/** Claude Code's and opencode's postinstall link their platform binary; Copilot's terminal add-ons are not needed for --help. */
const ALLOW_SCRIPTS: Readonly<Record<string, boolean>> = {
  ...Object.fromEntries(
    AGENT_PRESETS.filter((p) => p.npm === '@anthropic-ai/claude-code' || p.npm === 'opencode-ai').map((p) => [
      `${p.npm}@${p.checkedVersion}`,
      true,
    ]),
  ),
  'node-pty': false,
  '@github/keytar': false,
};

/** The folder whose executables are the installed agent CLIs (node_modules/.bin), installing them first if needed. */
export async function ensureAgentClis(cacheDir = join(projectRoot, '.cache', 'agent-clis')): Promise<string> {
  const bin = join(cacheDir, 'node_modules', '.bin');
  const marker = join(
    cacheDir,
    `installed-${createHash('sha256')
      .update(JSON.stringify([AGENT_CLI_PACKAGES, ALLOW_SCRIPTS]))
      .digest('hex')
      .slice(0, 12)}`,
  );
  if (existsSync(marker)) return bin;
  mkdirSync(dirname(cacheDir), { recursive: true });
  return withLock(`${cacheDir}.lock`, async () => {
    if (existsSync(marker)) return bin;
    rmSync(cacheDir, { recursive: true, force: true });
    mkdirSync(cacheDir, { recursive: true });
    const log = join(cacheDir, 'install.log');
    process.stderr.write(`Installing the agent CLIs (${AGENT_CLI_PACKAGES.join(', ')}) into ${cacheDir}\n`);
    writeFileSync(
      join(cacheDir, 'package.json'),
      JSON.stringify({ name: 'springfield-agent-clis', private: true, allowScripts: ALLOW_SCRIPTS }, null, 2) + '\n',
    );
    const node = node24();
    const env = cleanEnv({
      PATH: `${dirname(node)}${delimiter}${process.env.PATH ?? ''}`,
      npm_config_update_notifier: 'false',
    });
    try {
      const out = execFileSync(node, [npmCli(), 'install', '--no-audit', '--no-fund', ...AGENT_CLI_PACKAGES], {
        cwd: cacheDir,
        env,
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      writeFileSync(log, out);
    } catch (err) {
      const e = err as { stdout?: string; stderr?: string; status?: number };
      writeFileSync(log, `${e.stdout ?? ''}\n${e.stderr ?? ''}`);
      throw new Error(
        `installing the agent CLIs failed (npm exit ${e.status ?? '?'}): ${firstCause(readFileSync(log, 'utf8'))} — log: ${log}`,
      );
    }
    writeFileSync(marker, new Date().toISOString() + '\n');
    return bin;
  });
}
