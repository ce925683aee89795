import { spawn } from 'node:child_process';
import { delimiter } from 'node:path';
import { constants } from 'node:os';
import * as vscode from 'vscode';
import { isEditorVariable, type LaunchedAgent, type Launcher, type LaunchSpec, OutputTail } from '../core/index.ts';
import { agentEnvironment } from './model/databaseSetting.ts';
import { countCommits, runOutcome } from './model/runOutcome.ts';
import type { StoreHost } from './storeHost.ts';
import { baseName } from './views/viewText.ts';
import { roleSpec } from '../shared/roles.ts';

const DIM = '\x1b[2m';
/** Ended agent terminals kept open at most; older ones close (their outcome and output tail stay in the store). */
const KEEP_ENDED = 20;
const RESET = '\x1b[0m';

export interface AgentTerminalOptions {
  readonly host: StoreHost;
  /** A folder holding the `springfield` command, put first on the agent's PATH as the editor's own terminals have it. */
  readonly binDir?: string;
  /** Asked at each launch: show this terminal (without taking the focus)? */
  readonly reveal?: () => boolean;
}

/**
 * Each agent run is a terminal the extension drives (a pseudoterminal): `springfield run …` is its
 * child process, its output is shown as it comes, and when it ends the terminal keeps a one-line
 * outcome from the store until the person closes it (docs/editor-scheduler.md). The run's exit code
 * goes to the scheduler, not to VS Code, so no "terminal process terminated" toast per failed agent.
 */
export class AgentTerminalLauncher implements Launcher {
  private readonly o: AgentTerminalOptions;
  private readonly endedTerminals: vscode.Terminal[] = [];

  constructor(options: AgentTerminalOptions) {
    this.o = options;
  }

  launch(spec: LaunchSpec): LaunchedAgent {
    const started = Date.now();
    const tail = new OutputTail(10);
    const out = new vscode.EventEmitter<string>();
    const close = new vscode.EventEmitter<void>();
    const buffered: string[] = [];
    let opened = false;
    let ended = false;
    const write = (text: string): void => {
      const shown = text.replace(/\r?\n/g, '\r\n');
      if (opened) out.fire(shown);
      else buffered.push(shown);
    };

    const [program, ...args] = spec.argv;
    const child = spawn(program ?? '', args, { cwd: spec.cwd, env: this.env(spec), stdio: ['ignore', 'pipe', 'pipe'] });
    const pty: vscode.Pseudoterminal = {
      onDidWrite: out.event,
      onDidClose: close.event,
      open: () => {
        opened = true;
        for (const text of buffered.splice(0)) out.fire(text);
      },
      close: () => {
        if (!ended) child.kill('SIGTERM');
      },
      handleInput: (data) => {
        if (ended) close.fire();
        else if (data === '\x03') {
          write('^C\n');
          child.kill('SIGINT');
        }
      },
    };
    const terminal = vscode.window.createTerminal({
      name: spec.name, pty, iconPath: new vscode.ThemeIcon(roleSpec(spec.role)?.icon ?? 'terminal'),
      // Nothing to bring back after a reload: the run is the store's, and this process belonged to the old window.
      isTransient: true,
    });
    if (this.o.reveal?.()) terminal.show(true);
    const closed = vscode.window.onDidCloseTerminal((t) => {
      if (t !== terminal) return;
      closed.dispose();
      const at = this.endedTerminals.indexOf(terminal);
      if (at >= 0) this.endedTerminals.splice(at, 1);
      out.dispose();
      close.dispose();
    });
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
      child.once('close', (code, signal) => resolve(signal ? 128 + (constants.signals[signal] ?? 0) : code ?? 1));
    });
    void done.then(async (code) => {
      ended = true;
      const launchId = spec.env.SPRINGFIELD_LAUNCH_ID;
      await this.o.host.refresh();
      const run = this.o.host.snapshot?.runs.find((r) => r.launch_id === launchId);
      const commits = run?.head_before && run.head_after ? await countCommits(run.worktree ?? spec.cwd, run.head_before, run.head_after) : null;
      const outcome = runOutcome(this.o.host.snapshot, run, code, Date.now() - started, commits);
      write(`\n\x1b[1;${outcome.ok ? '32m✓' : '31m✗'} ${spec.name}: ${outcome.text}${RESET}\n${DIM}Press any key to close this terminal.${RESET}\n`);
      this.endedTerminals.push(terminal);
      while (this.endedTerminals.length > KEEP_ENDED) this.endedTerminals.shift()?.dispose();
    });
    return { done, kill: () => child.kill('SIGTERM'), tail: () => tail.text() };
  }

  /** The editor's environment without its own variables, the CLI run by this editor's runtime, `springfield` on PATH, the editor's database. */
  private env(spec: LaunchSpec): NodeJS.ProcessEnv {
    return agentEnvironment(process.env, isEditorVariable, spec.env, this.o.binDir, this.o.host.databaseUrl, delimiter, spec.cwd);
  }
}
