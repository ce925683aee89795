// The CLI in the test process for tests written synchronously (the fault suite's `f.sf`, which used
// spawnSync): a worker thread loads the whole CLI once and runs each invocation through
// cliInProcess.ts's dispatchHere, while the caller waits on Atomics.wait as spawnSync would. What
// the command sees is what a spawned run gets: `cwd` and `env` through the Io, and `env` as the
// worker's process.env too (the scheduler's helpers read it: worktrees). The commands that use their
// own process's streams (cliInProcess's OWN_STREAMS) are spawned, as before. A spawned `springfield`
// costs a Node start and the whole CLI's load, about 0.3 s of CPU; the fault suite makes about 900.
import { spawnSync } from 'node:child_process';
import { MessageChannel, receiveMessageOnPort, Worker, type MessagePort } from 'node:worker_threads';
import { OWN_STREAMS, type Ran } from './cliInProcess.ts';
import { CLI_PATH, ensureCli } from './gitRepo.ts';

export interface SyncRequest {
  readonly cwd: string;
  readonly args: readonly string[];
  readonly env: NodeJS.ProcessEnv;
}

let worker: { readonly port: MessagePort; readonly done: Int32Array; readonly thread: Worker } | undefined;
let built = false;

function start(): NonNullable<typeof worker> {
  const done = new Int32Array(new SharedArrayBuffer(4));
  const { port1, port2 } = new MessageChannel();
  const thread = new Worker(new URL('./cliSyncWorker.ts', import.meta.url), {
    workerData: { port: port2, done },
    transferList: [port2],
  });
  thread.unref();
  port1.unref();
  return { port: port1, done, thread };
}

/** Runs one invocation in `cwd` with exactly `env`, in this process unless it is one of OWN_STREAMS; null code when it took over `timeoutMs`. */
export function runCliSync(
  cwd: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  timeoutMs = 60_000,
): { code: number | null; stdout: string; stderr: string } {
  if (OWN_STREAMS.has(args[0] ?? '')) {
    if (!built) ensureCli();
    built = true;
    const r = spawnSync(process.execPath, [CLI_PATH, ...args], { cwd, encoding: 'utf8', env, timeout: timeoutMs });
    return { code: r.status, stdout: r.stdout, stderr: r.stderr };
  }
  worker ??= start();
  const { port, done } = worker;
  Atomics.store(done, 0, 0);
  port.postMessage({ cwd, args, env } satisfies SyncRequest);
  if (Atomics.wait(done, 0, 0, timeoutMs) === 'timed-out') {
    // As spawnSync's timeout: no result. The worker may still be in the command: start another.
    void worker.thread.terminate();
    worker = undefined;
    return { code: null, stdout: '', stderr: `springfield ${args.join(' ')}: no answer in ${timeoutMs} ms\n` };
  }
  const reply = receiveMessageOnPort(port)?.message as Ran | undefined;
  if (!reply) throw new Error(`springfield ${args.join(' ')}: the in-process CLI sent no result`);
  return reply;
}
