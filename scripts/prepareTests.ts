// Everything the test pass needs beyond npm packages: Debian's Chromium, the headers code-server's
// native modules build against, jq for the shared contract check, PostgreSQL's server binaries,
// code-server itself, and the npm-published agent CLIs whose --help the preset test reads.
import { ensureAgentClis } from './agentClis.ts';
import { ensureCodeServer } from './codeServer.ts';
import { ensureAptPackages, TEST_PACKAGES } from './systemDeps.ts';
import { messageOf } from '../src/shared/errorMessage.ts';

try {
  ensureAptPackages(TEST_PACKAGES);
  await ensureCodeServer();
  await ensureAgentClis();
} catch (error) {
  process.stderr.write(`prepare tests: ${messageOf(error)}\n`);
  process.exitCode = 1;
}
