/**
 * `"notify": { "command": [...] }` (docs/scheduler.md, "The person's queue"): when something enters
 * the list of what waits for a person, the command runs once for it — an argument vector, never a
 * shell — with the item as one JSON object on stdin. It runs only from a scheduler whose config the
 * person allowed (docs/trust.md: every array of strings in the config is shown as a command).
 */
import { spawn } from 'node:child_process';
import { displayCommand } from './verify.ts';
import { messageOf } from '../../shared/errorMessage.ts';

/** What the command reads on stdin. */
export interface NotifyItem {
  readonly epic_id: string;
  readonly message: string;
  /** The main worktree of the repository it is about. */
  readonly repository: string;
}

const NOTIFY_TIMEOUT_MS = 30_000;

/**
 * Tells each item once while it stands: an item that leaves the list and comes back is told again.
 * Items are remembered by this process only, so a scheduler started anew tells what waits once more.
 */
export class Notifier {
  private told = new Set<string>();
  private readonly command: readonly string[] | null;
  private readonly repository: string;
  private readonly log: (line: string) => void;

  constructor(command: readonly string[] | null, repository: string, log: (line: string) => void) {
    this.command = command;
    this.repository = repository;
    this.log = log;
  }

  /** The items that wait for a person now; returns the ones told for the first time. */
  update(items: readonly { readonly epic_id: string; readonly message: string }[]): NotifyItem[] {
    const now = new Map(items.map((i) => [`${i.epic_id}\0${i.message}`, i]));
    const fresh = [...now].filter(([key]) => !this.told.has(key)).map(([, i]) => i);
    this.told = new Set(now.keys());
    const out = fresh.map((i) => ({ epic_id: i.epic_id, message: i.message, repository: this.repository }));
    for (const item of out) void this.run(item);
    return out;
  }

  /** Runs the command with the item on stdin; a failure is logged, never thrown. */
  private run(item: NotifyItem): Promise<void> {
    const argv = this.command;
    if (!argv?.[0]) return Promise.resolve();
    return new Promise((resolve) => {
      const said = (why: string) => this.log(`notify ${displayCommand(argv)} for ${item.epic_id} ${why}`);
      const child = spawn(argv[0] as string, argv.slice(1), {
        cwd: this.repository,
        stdio: ['pipe', 'ignore', 'pipe'],
        timeout: NOTIFY_TIMEOUT_MS,
        killSignal: 'SIGKILL',
      });
      let stderr = '';
      child.stderr.on('data', (c: Buffer) => {
        stderr = (stderr + c.toString('utf8')).slice(-400);
      });
      child.stdin.on('error', () => undefined);
      child.stdin.end(`${JSON.stringify(item)}\n`);
      child.once('error', (err) => {
        said(`could not start: ${messageOf(err)}`);
        resolve();
      });
      child.once('close', (code, signal) => {
        if (code !== 0)
          said(
            `${signal ? `was ended (${signal})` : `exited ${code}`}${stderr.trim() ? `: ${stderr.trim().split('\n').at(-1)}` : ''}`,
          );
        resolve();
      });
    });
  }
}
