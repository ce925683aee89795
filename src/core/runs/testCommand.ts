import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** A repository's own test command, as Configure agents… proposes it for verification. */
export interface TestCommand {
  /** The command, as `verification` in .springfield/config.json holds it (no shell). */
  readonly argv: readonly string[];
  /** Where it was found, in words: "package.json's test script". */
  readonly source: string;
}

/** What `npm init` writes when there are no tests: not a test command. */
const NPM_PLACEHOLDER = /no test specified/;

/**
 * The repository's obvious test command, found by looking (nothing is run): package.json's `test`
 * script (npm, or pnpm / yarn / bun by their lockfile), a Makefile's `test` target, `cargo test`,
 * `go test ./...`, or `pytest` where the project says it uses pytest. Null when none is obvious.
 */
export function detectTestCommand(root: string): TestCommand | null {
  const text = (name: string): string | null => {
    try {
      const path = join(root, name);
      return statSync(path).isFile() && statSync(path).size < 1024 * 1024 ? readFileSync(path, 'utf8') : null;
    } catch {
      return null;
    }
  };
  const pkg = text('package.json');
  if (pkg !== null) {
    let test: unknown;
    try {
      test = (JSON.parse(pkg) as { scripts?: Record<string, unknown> }).scripts?.test;
    } catch {
      test = undefined;
    }
    if (typeof test === 'string' && test.trim() !== '' && !NPM_PLACEHOLDER.test(test)) {
      const runner = existsSync(join(root, 'pnpm-lock.yaml'))
        ? 'pnpm'
        : existsSync(join(root, 'yarn.lock'))
          ? 'yarn'
          : existsSync(join(root, 'bun.lockb')) || existsSync(join(root, 'bun.lock'))
            ? 'bun'
            : 'npm';
      return {
        argv: runner === 'bun' ? ['bun', 'run', 'test'] : [runner, 'test'],
        source: "package.json's test script",
      };
    }
  }
  const makefile = text('Makefile') ?? text('makefile') ?? text('GNUmakefile');
  if (makefile !== null && /^test\s*:(?!=)/m.test(makefile))
    return { argv: ['make', 'test'], source: "the Makefile's test target" };
  if (text('Cargo.toml') !== null) return { argv: ['cargo', 'test'], source: 'Cargo.toml' };
  if (text('go.mod') !== null) return { argv: ['go', 'test', './...'], source: 'go.mod' };
  const pyproject = text('pyproject.toml');
  const usesPytest =
    text('pytest.ini') !== null ||
    text('conftest.py') !== null ||
    /\[tool\.pytest/.test(pyproject ?? '') ||
    /\[(tool:)?pytest\]/.test(text('setup.cfg') ?? '') ||
    /\[pytest\]/.test(text('tox.ini') ?? '');
  if (usesPytest) return { argv: ['pytest'], source: 'the pytest configuration' };
  return null;
}
