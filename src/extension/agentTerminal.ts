import { spawn, type ChildProcess } from 'node:child_process';
import { delimiter } from 'node:path';
import { constants } from 'node:os';
import * as vscode from 'vscode';
import { isEditorVariable, type LaunchedAgent, type Launcher, type LaunchSpec, OutputTail } from '../core/index.ts';
import { agentEnvironment } from './model/databaseSetting.ts';
import { countCommits, runOutcome } from './model/runOutcome.ts';
import { terminalKey, terminalName, toClose } from './model/terminalSlots.ts';
import type { StoreHost } from './storeHost.ts';
import { baseName } from './views/viewText.ts';
import { roleSpec } from '../shared/roles.ts';

const DIM = '\x1b[2m';
const RESET = '\x1b[0m';

export interface AgentTerminalOptions {
  readonly host: StoreHost;
  /** A folder holding the `springfield` command, put first on the agent's PATH as the editor's own terminals have it. */
  readonly binDir?: string;
  /** Asked at each launch: show this terminal (without taking the focus)? */
  readonly reveal?: () => boolean;
}

/** One terminal an epic's role runs in, run after run. */
interface Slot {
  readonly key: string;
  readonly epicId: string | undefined;
  readonly role: string;
  readonly terminal: vscode.Terminal;
  readonly write: (text: string) => void;
  /** The run shown now, while it is under way. */
  child: ChildProcess | undefined;
  running: boolean;
  lastUsed: number;
}

/**
 * Each agent run goes to a terminal the extension drives (a pseudoterminal): `springfield run …` is
 * its child process, its output is shown as it comes, and when it ends the terminal keeps a one-line
 * outcome from the store. The next run of the same role on the same epic goes to the same terminal,
 * under that line; only the first run after Start shows its terminal (VS Code does not tell an
 * extension what its panel shows, so any later reveal could take the panel from the Comments or
 * Problems view the person reads); past TERMINAL_LIMIT the oldest ended terminals close
 * (docs/editor-scheduler.md). The run's exit code goes to the scheduler, not to VS Code, so no
 * "terminal process terminated" toast.
 */
export class AgentTerminalLauncher implements Launcher {
  private readonly reveal: AgentTerminalOptions['reveal'];
  private readonly host: AgentTerminalOptions['host'];
  private readonly binDir: AgentTerminalOptions['binDir'];
  private readonly slots = new Map<string, Slot>();
  private used = 0;

  constructor(options: AgentTerminalOptions) {
    this.reveal = options.reveal;
    this.host = options.host;
    this.binDir = options.binDir;
  }

  /** The terminal of an epic's agent runs (the given role's, else the latest used), if one is open. */
  terminalFor(epicId: string, role?: string): vscode.Terminal | undefined {
    const mine = [...this.slots.values()].filter((s) => s.epicId === epicId && (!role || s.role === role));
    return mine.sort((a, b) => b.lastUsed - a.lastUsed)[0]?.terminal;
  }

  launch(spec: LaunchSpec): LaunchedAgent {
    const started = Date.now();
    const tail = new OutputTail(10);
    const slot = this.slotFor(spec);
    const { write } = slot;
    slot.running = true;
    slot.lastUsed = ++this.used;
    this.closeOld();
    const [program, ...args] = spec.argv;
    const child = spawn(program ?? '', args, { cwd: spec.cwd, env: this.env(spec), stdio: ['ignore', 'pipe', 'pipe'] });
    slot.child = child;
    if (this.reveal?.()) slot.terminal.show(true);
    write(`${DIM}springfield run · ${spec.name} · in ${baseName(spec.cwd)} · Ctrl+C stops it${RESET}\n`);
    const show = (chunk: Buffer): void => {
      tail.push(chunk);
      write(chunk.toString());
    };
    child.stdout.on('data', show);
    child.stderr.on('data', show);
    const done = new Promise<number>((resolve) => {
      child.once('error', (err) => {
        if (child.pid !== undefined) return;
        tail.note(`cannot start springfield run: ${err.message}`);
        write(`cannot start springfield run: ${err.message}\n`);
        resolve(127);
      });
      child.once('close', (code, signal) => resolve(signal ? 128 + (constants.signals[signal] ?? 0) : (code ?? 1)));
    });
    void done.then(async (code) => {
      const launchId = spec.env.SPRINGFIELD_LAUNCH_ID;
      await this.host.refresh();
      const run = this.host.snapshot?.runs.find((r) => r.launch_id === launchId);
      const commits =
        run?.head_before && run.head_after
          ? await countCommits(run.worktree ?? spec.cwd, run.head_before, run.head_after)
          : null;
      const outcome = runOutcome(this.host.snapshot, run, code, Date.now() - started, commits);
      write(
        `\n\x1b[1;${outcome.ok ? '32m✓' : '31m✗'} ${spec.name}: ${outcome.text}${RESET}\n${DIM}Its next run continues here. Press any key to close this terminal.${RESET}\n\n`,
      );
      if (slot.child === child) {
        slot.child = undefined;
        slot.running = false;
      }
      this.closeOld();
    });
    return { done, kill: () => child.kill('SIGTERM'), tail: () => tail.text() };
  }

  /** The epic's role's terminal when its last run is over, else a new one. */
  private slotFor(spec: LaunchSpec): Slot {
    const key = terminalKey(spec.epicId, spec.role, spec.name);
    const existing = this.slots.get(key);
    if (existing && !existing.running) return existing;
    const slot = this.open(existing ? `${key}|${Date.now()}` : key, spec);
    this.slots.set(slot.key, slot);
    return slot;
  }

  /** Past TERMINAL_LIMIT, the least recently used terminals whose run is over close (their outcome stays in the store). */
  private closeOld(): void {
    for (const old of toClose([...this.slots.values()])) {
      this.slots.delete(old.key);
      old.terminal.dispose();
    }
  }

  private open(key: string, spec: LaunchSpec): Slot {
    const out = new vscode.EventEmitter<string>();
    const close = new vscode.EventEmitter<void>();
    const buffered: string[] = [];
    let opened = false;
    const write = (text: string): void => {
      const shown = text.replace(/\r?\n/g, '\r\n');
      if (opened) out.fire(shown);
      else buffered.push(shown);
    };
    // The pseudoterminal's callbacks reach the slot made once the terminal exists.
    const made: { slot?: Slot } = {};
    const pty: vscode.Pseudoterminal = {
      onDidWrite: out.event,
      onDidClose: close.event,
      open: () => {
        opened = true;
        for (const text of buffered.splice(0)) out.fire(text);
      },
      close: () => {
        if (made.slot?.running) made.slot.child?.kill('SIGTERM');
      },
      handleInput: (data) => {
        if (!made.slot?.running) close.fire();
        else if (data === '\x03') {
          write('^C\n');
          made.slot.child?.kill('SIGINT');
        }
      },
    };
    const title = spec.epicId ? this.host.snapshot?.epics.find((e) => e.id === spec.epicId)?.title : undefined;
    const name = spec.epicId ? terminalName(roleSpec(spec.role)?.name ?? spec.role, title ?? spec.epicId) : spec.name;
    const terminal = vscode.window.createTerminal({
      name,
      pty,
      iconPath: new vscode.ThemeIcon(roleSpec(spec.role)?.icon ?? 'terminal'),
      // Nothing to bring back after a reload: the run is the store's, and this process belonged to the old window.
      isTransient: true,
    });
    const slot: Slot = {
      key,
      epicId: spec.epicId,
      role: spec.role,
      terminal,
      write,
      child: undefined,
      running: false,
      lastUsed: 0,
    };
    const closed = vscode.window.onDidCloseTerminal((t) => {
      if (t !== terminal) return;
      closed.dispose();
      if (this.slots.get(key)?.terminal === terminal) this.slots.delete(key);
      out.dispose();
      close.dispose();
    });
    made.slot = slot;
    return slot;
  }

  /** The editor's environment without its own variables, the CLI run by this editor's runtime, `springfield` on PATH, the editor's database. */
  private env(spec: LaunchSpec): NodeJS.ProcessEnv {
    return agentEnvironment(
      process.env,
      isEditorVariable,
      spec.env,
      this.binDir,
      this.host.databaseUrl,
      delimiter,
      spec.cwd,
    );
  }
}
