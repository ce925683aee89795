import { enableCompileCache } from 'node:module';

// Cache compiled code between runs: agents call the CLI many times (Node >= 22.1).
enableCompileCache?.();
const { runCli } = await import('./main.ts');
const code = await runCli(process.argv.slice(2), {
  cwd: process.cwd(),
  env: process.env,
  stdout: (t) => process.stdout.write(t),
  stderr: (t) => process.stderr.write(t),
});
process.exitCode = code;
