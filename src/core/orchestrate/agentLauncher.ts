import { spawn } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { isEditorVariable } from '../runs/agentEnv.ts';
import { OutputTail } from '../runs/processGroup.ts';
import { ensureOwnDirectory, openExclusive } from '../safeFiles.ts';

/** One agent to start: the full `springfield run …` argv (program first), where, and how to name it. */
export interface LaunchSpec {
  readonly argv: readonly string[];
  readonly cwd: string;
  readonly env: Readonly<Record<string, string>>;
  /** "Ralph · sf-a3f8 · step-2": the terminal name in VS Code, the log prefix headless. */
  readonly name: string;
  readonly role: string;
  /** The epic and step the run is for (the editor keeps one terminal per epic and role). */
  readonly epicId?: string;
  readonly step?: string | null;
}

export interface LaunchedAgent {
  /** Resolves with the exit code when the agent process ends. */
  readonly done: Promise<number>;
  kill(): void;
  /** The last lines it printed, when the launcher can see them (what `springfield run` said if it never recorded a run). */
  tail?(): string;
}

/** Starts agent processes: a PTY terminal in VS Code, a child process headless. */
export interface Launcher {
  launch(spec: LaunchSpec): LaunchedAgent;
}

/** Headless: a child process whose output goes to a log file and, line by line, to `log`. */
export class ProcessLauncher implements Launcher {
  private readonly logDir: string;
  private readonly log: (line: string) => void;

  constructor(logDir: string, log: (line: string) => void) {
    this.logDir = logDir;
    this.log = log;
    ensureOwnDirectory(logDir); // a planted link is refused before anything is claimed
  }

  launch(spec: LaunchSpec): LaunchedAgent {
    // A new file of a fresh name in a real directory of ours: never through a link planted in .springfield/.
    ensureOwnDirectory(this.logDir);
    const { path, fd } = openExclusive(this.logDir, `${spec.name.replace(/[^\w.-]+/g, '_')}-${Date.now()}`, '.log');
    const file = createWriteStream(path, { fd });
    const env: NodeJS.ProcessEnv = {};
    for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !isEditorVariable(k)) env[k] = v;
    Object.assign(env, spec.env, { PWD: spec.cwd });
    const [cmd, ...args] = spec.argv;
    const child = spawn(cmd as string, args, { cwd: spec.cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    const tail = new OutputTail(10);
    const forward = (chunk: Buffer) => {
      file.write(chunk);
      tail.push(chunk);
      for (const line of chunk.toString().split('\n')) if (line.trim()) this.log(`[${spec.name}] ${line}`);
    };
    child.stdout.on('data', forward);
    child.stderr.on('data', forward);
    const done = new Promise<number>((resolve) => {
      child.on('error', (err) => {
        this.log(`[${spec.name}] cannot start: ${err.message}`);
        file.end();
        resolve(127);
      });
      child.on('close', (code, signal) => {
        file.end();
        resolve(code ?? (signal ? 128 + 9 : 1));
      });
    });
    return { done, kill: () => child.kill('SIGTERM'), tail: () => tail.text() };
  }
}
