import { AgentOutputRenderer, type AgentOutputFormat } from './agentOutput.ts';
import { type GroupEnd, startGroup } from './processGroup.ts';

const FORWARDED: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

/** When a run that shows no sign of life is ended (docs/scheduler-faults.md, "Stalled runs"). */
export interface StallWatch {
  readonly ms: number;
  /** Output lines that are not a sign of life: a CLI's own network retries ("Reconnecting…"). */
  readonly retryLines: readonly RegExp[];
  /** True when the store changed for this run's epic since the last call (an item ticked, a step started, …). */
  readonly progressed: () => Promise<boolean>;
}

export interface SuperviseOptions {
  readonly cwd: string;
  readonly env: NodeJS.ProcessEnv;
  readonly json: boolean;
  readonly timeoutMs: number;
  readonly graceMs: number;
  readonly captureStdoutBytes: number;
  readonly captureStderrBytes: number;
  readonly stall: StallWatch | null;
  /** The agent prints JSON events in this format: what is shown is their readable form (docs/agents.md, "What a terminal shows"). */
  readonly render: AgentOutputFormat | null;
}

export interface Supervised extends GroupEnd {
  /** The signal someone sent us to stop the agent (a person's Ctrl+C, the scheduler being stopped), before its timeout. */
  readonly stoppedBy: NodeJS.Signals | null;
  /** Why the run was ended as stalled, or null. */
  readonly stalled: string | null;
}

/**
 * Runs the agent (no shell) as the leader of its own process group, its output passing through to
 * ours; SIGINT/SIGTERM/SIGHUP sent to us end its whole group (a stop, unless it comes past the run's
 * timeout: then the scheduler's backstop is ending a run that overran). With a stall watch, a run
 * that prints nothing but its CLI's retries and changes nothing in the store for `stall.ms` is ended.
 */
export async function supervise(
  command: readonly string[],
  options: SuperviseOptions,
  started: (pid: number) => Promise<void>,
): Promise<Supervised> {
  const begun = Date.now();
  let lastLife = begun;
  let retrying = false;
  const stall = options.stall;
  // With --json our stdout carries exactly one document, so the agent's stdout goes to stderr.
  const shown = options.json ? process.stderr : process.stdout;
  const rendered = options.render ? new AgentOutputRenderer(options.render, options.cwd, shown) : null;
  const group = startGroup(command, {
    cwd: options.cwd,
    env: options.env,
    timeoutMs: options.timeoutMs,
    graceMs: options.graceMs,
    captureStdoutBytes: options.captureStdoutBytes,
    captureStderrBytes: options.captureStderrBytes,
    stdout: rendered ?? shown,
    stderr: process.stderr,
    stdin: 'inherit',
    ...(stall
      ? {
          onOutput: (chunk: Buffer): void => {
            const lines = chunk
              .toString()
              .split('\n')
              .filter((l) => l.trim() !== '');
            const retries = lines.length > 0 && lines.every((l) => stall.retryLines.some((r) => r.test(l)));
            if (retries) retrying = true;
            else if (lines.length > 0) {
              retrying = false;
              lastLife = Date.now();
            }
          },
        }
      : {}),
  });
  let stoppedBy: NodeJS.Signals | null = null;
  let stalled: string | null = null;
  const forward = (signal: NodeJS.Signals): void => {
    stoppedBy ??= signal;
    group.stop(signal);
  };
  for (const s of FORWARDED) process.on(s, forward);
  // Whoever showed the output may go away (the editor window that started the run closes): the
  // agent goes on, its output only to the stored tail, and the run is still recorded.
  const unread = (): void => undefined;
  process.stdout.on('error', unread);
  process.stderr.on('error', unread);
  let checking = false;
  const watch = stall
    ? setInterval(
        () => {
          if (checking || stalled !== null || Date.now() - lastLife < stall.ms) return;
          checking = true;
          void stall
            .progressed()
            .catch(() => false)
            .then((moved) => {
              checking = false;
              if (moved) {
                lastLife = Date.now();
                return;
              }
              const seconds = Math.round(stall.ms / 1000);
              stalled = retrying
                ? `for ${seconds} s it printed only its own network retries and changed nothing in the store`
                : `no output and no progress in the store for ${seconds} s`;
              group.stop('SIGTERM');
            });
        },
        Math.max(100, Math.min(5000, stall.ms / 5)),
      )
    : undefined;
  watch?.unref();
  try {
    if (group.pid !== undefined) await started(group.pid).catch(() => undefined);
    const end = await group.done;
    rendered?.end();
    const overran = stoppedBy !== null && Date.now() - begun >= options.timeoutMs;
    return { ...end, timedOut: end.timedOut || overran, stoppedBy: overran || stalled ? null : stoppedBy, stalled };
  } finally {
    clearInterval(watch);
    for (const s of FORWARDED) process.off(s, forward);
  }
}
