// Runs inside the real extension host (code-server): the trust suite, then the command-on-PATH suite,
// in one editor session (test/integration/trustAndPath.test.ts). Each part runs even when the one
// before it failed, logs its own "finished" line, and a failure names its part; the run fails if either did.
// Both parts read the same SUITE_FIXTURE, which carries the fields of each.
import { run as onPath } from './cliOnPath.suite.ts';
import { run as trust } from './trust.suite.ts';

/** Entry point called by the smoke-test driver. */
export async function run(): Promise<void> {
  let failed: unknown = null;
  // Trust first: it checks what the extension decided as it activated, before anything else happened.
  for (const [name, part] of [
    ['springfield-trust', trust],
    ['springfield-cli-on-path', onPath],
  ] as const) {
    try {
      await part();
    } catch (error) {
      console.error(`${name} failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
      failed ??= error;
    }
  }
  if (failed) throw failed;
}
