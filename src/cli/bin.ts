import { writeSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { dispatch, type Io } from './dispatch.ts';
import { isStepCommand, STEP_MODULES } from './commands/modules.ts';

/**
 * The `springfield` executable (bundled as CommonJS: no ES module loader to start). Step commands and
 * --version run from this bundle alone; anything else loads the whole CLI (dist/full/main.js).
 */
const argv = process.argv.slice(2);
const io: Io = { cwd: process.cwd(), env: process.env, stdout: (t) => write(1, t), stderr: (t) => write(2, t) };
const fast = isStepCommand(argv[0]) || argv[0] === '--version' || argv[0] === '-V';
const run = fast
  ? dispatch(argv, io, STEP_MODULES)
  : import(pathToFileURL(join(__dirname, 'full', 'main.js')).href).then((m: typeof import('./main.ts')) => m.runCli(argv, io));
run.then((code) => { process.exitCode = code; }, (err: unknown) => {
  write(2, `springfield: internal error: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = 70;
});

/**
 * Writes straight to the file descriptor: one document per call, and no stream machinery to load.
 * A non-blocking descriptor that is full hands the rest to the stream, which waits for it; a closed
 * pipe ends the output quietly.
 */
function write(fd: 1 | 2, text: string): void {
  const data = Buffer.from(text);
  let at = 0;
  try {
    while (at < data.length) at += writeSync(fd, data, at);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EPIPE') return; // the reader went away (`springfield show | head`): nothing to tell it
    if (code !== 'EAGAIN') throw err;
    (fd === 1 ? process.stdout : process.stderr).write(data.subarray(at));
  }
}
