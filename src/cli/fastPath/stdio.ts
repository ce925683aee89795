import { writeSync } from 'node:fs';
import type { Io } from '../dispatch.ts';
import { messageOf } from '../../shared/errorMessage.ts';

/** Whether some output went to a stream (the descriptor was full) and may still be on its way. */
let streamed = false;

/** This process's working directory, environment, stdout and stderr, for `dispatch`. */
export function processIo(): Io {
  return { cwd: process.cwd(), env: process.env, stdout: (t) => write(1, t), stderr: (t) => write(2, t) };
}

/**
 * Sets the exit code when a CLI run ends; an error that escaped it is reported in one line, exit 70.
 * With `immediately` (a run that leaves nothing behind it: the step commands), the process then exits
 * at once, sparing the ~1 ms Node spends tearing its heap down, unless output is still draining.
 */
export function exitWhenDone(run: Promise<number>, options: { immediately?: boolean } = {}): void {
  const done = (code: number): void => {
    process.exitCode = code;
    if (!options.immediately || streamed) return;
    process.exit(code);
  };
  run.then(done, (err: unknown) => {
    write(2, `springfield: internal error: ${messageOf(err)}\n`);
    done(70);
  });
}

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
    streamed = true;
    (fd === 1 ? process.stdout : process.stderr).write(data.subarray(at));
  }
}
