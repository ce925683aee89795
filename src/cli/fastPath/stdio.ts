import { writeSync } from 'node:fs';
import type { Io } from '../dispatch.ts';
import { messageOf } from '../../shared/errorMessage.ts';

/** This process's working directory, environment, stdout and stderr, for `dispatch`. */
export function processIo(): Io {
  return { cwd: process.cwd(), env: process.env, stdout: (t) => write(1, t), stderr: (t) => write(2, t) };
}

/** Sets the exit code when a CLI run ends; an error that escaped it is reported in one line, exit 70. */
export function exitWhenDone(run: Promise<number>): void {
  run.then(
    (code) => {
      process.exitCode = code;
    },
    (err: unknown) => {
      write(2, `springfield: internal error: ${messageOf(err)}\n`);
      process.exitCode = 70;
    },
  );
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
    (fd === 1 ? process.stdout : process.stderr).write(data.subarray(at));
  }
}
