// Debian packages the tests and the demo need (the real-editor tests; PostgreSQL for the throwaway
// server of scripts/postgres.ts). Installed when missing and running as root (as on a fresh machine
// of this project's kind and in CI); otherwise one line says what to run.
import { execFileSync, spawnSync } from 'node:child_process';

export const TEST_PACKAGES = ['chromium', 'libkrb5-dev', 'jq', 'git', 'postgresql', 'sqlite3'] as const;
export const DEMO_PACKAGES = ['libkrb5-dev', 'git'] as const;

function installed(pkg: string): boolean {
  const r = spawnSync('dpkg-query', ['-W', '-f=${Status}', pkg], { encoding: 'utf8' });
  return r.status === 0 && r.stdout.includes('install ok installed');
}

/** Makes sure the packages are present; throws one clear line when they are not and cannot be installed. */
export function ensureAptPackages(packages: readonly string[]): void {
  if (process.platform !== 'linux' || spawnSync('dpkg-query', ['--version']).status !== 0) return;
  const missing = packages.filter((p) => !installed(p));
  if (missing.length === 0) return;
  if (process.getuid?.() !== 0) {
    throw new Error(
      `missing system packages: ${missing.join(' ')} — install them with: sudo apt-get install -y ${missing.join(' ')}`,
    );
  }
  process.stderr.write(`Installing system packages: ${missing.join(' ')}\n`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  execFileSync('apt-get', ['update', '-qq'], { stdio: ['ignore', 'ignore', 'inherit'], env });
  execFileSync('apt-get', ['install', '-y', '-qq', '--no-install-recommends', ...missing], {
    stdio: ['ignore', 'ignore', 'inherit'],
    env,
  });
}
