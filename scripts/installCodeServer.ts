// Installs code-server (a real VS Code for integration tests) into .cache/code-server; a no-op when present.
import { ensureCodeServer } from './codeServer.ts';
import { messageOf } from '../src/shared/errorMessage.ts';

try {
  const started = Date.now();
  const entry = await ensureCodeServer();
  process.stdout.write(`code-server ready: ${entry} (${Math.round((Date.now() - started) / 1000)} s)\n`);
} catch (error) {
  process.stderr.write(`${messageOf(error)}\n`);
  process.exitCode = 1;
}
