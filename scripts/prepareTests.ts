// Everything the test pass needs beyond npm packages: Debian's Chromium, the headers code-server's
// native modules build against, jq for the shared contract check, and code-server itself.
import { ensureCodeServer } from './codeServer.ts';
import { ensureAptPackages, TEST_PACKAGES } from './systemDeps.ts';

try {
  ensureAptPackages(TEST_PACKAGES);
  await ensureCodeServer();
} catch (error) {
  process.stderr.write(`prepare tests: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
}
