// cliSync.ts's worker: runs each invocation it is sent, one at a time, and wakes the waiting caller.
import { workerData, type MessagePort } from 'node:worker_threads';
import { dispatchHere } from './cliInProcess.ts';
import type { SyncRequest } from './cliSync.ts';

const { port, done } = workerData as { port: MessagePort; done: Int32Array };

port.on('message', (request: SyncRequest) => {
  // The worker's process.env is its own copy: the command reads the caller's environment there too.
  for (const key of Object.keys(process.env)) delete process.env[key];
  Object.assign(process.env, request.env);
  void dispatchHere(request.cwd, request.args, request.env).then(
    (ran) => reply(ran),
    (err: unknown) => reply({ code: 70, stdout: '', stderr: `springfield: internal error: ${String(err)}\n` }),
  );
});

function reply(ran: { code: number; stdout: string; stderr: string }): void {
  port.postMessage(ran);
  Atomics.store(done, 0, 1);
  Atomics.notify(done, 0);
}
