import { lstatSync, readFileSync, readlinkSync, statSync, symlinkSync, unlinkSync, type Stats } from 'node:fs';
import { join, resolve } from 'node:path';
import { ensureOwnDirectory, EnvironmentError, RefusedError, replaceFile } from '../core/index.ts';
import { CLI_PACKAGE } from '../shared/cliPackage.ts';
import { messageOf } from '../shared/errorMessage.ts';

/**
 * `springfield` for terminals outside the editor, as VS Code offers `code`: the extension keeps a
 * small wrapper in its global storage (`<globalStorage>/bin/springfield`, rewritten on each activation
 * to run the CLI it ships with the editor's own runtime under ELECTRON_RUN_AS_NODE=1), and the
 * command "Install 'springfield' command in PATH" links it into a folder of the user's PATH. The link
 * names the wrapper, not the versioned extension folder, so it survives updates of the extension and
 * of the editor. Nothing here imports vscode: the commands (springfield.ts) show what these return.
 */

const q = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;

/** The POSIX wrapper: the CLI under the editor's runtime, or one line when either is gone. */
export function wrapperScript(runtime: string, cli: string): string {
  return [
    '#!/bin/sh',
    `runtime=${q(runtime)}`,
    `cli=${q(cli)}`,
    'if [ ! -x "$runtime" ] || [ ! -f "$cli" ]; then',
    `  echo "springfield: $cli or $runtime is gone (the editor or its Springfield extension was updated or removed): open the editor once to update this command, or install the CLI with: npm install -g ${CLI_PACKAGE}" >&2`,
    '  exit 3',
    'fi',
    'ELECTRON_RUN_AS_NODE=1 exec "$runtime" "$cli" "$@"',
    '',
  ].join('\n');
}

/** The Windows wrapper (editor terminals only: installing it on PATH is not offered there). */
export function wrapperCmd(runtime: string, cli: string): string {
  return `@echo off\r\nset ELECTRON_RUN_AS_NODE=1\r\n"${runtime}" "${cli}" %*\r\n`;
}

/**
 * Writes the wrappers into `bin` (a directory of this user's, never a link) and returns the POSIX one's
 * path. Each file is replaced atomically (a new file renamed over it: never written through a link,
 * never seen half written by a terminal running it) and only when its text changed.
 */
export function writeCliWrappers(bin: string, runtime: string, cli: string, platform = process.platform): string {
  ensureOwnDirectory(bin);
  const files: [string, string][] = [['springfield', wrapperScript(runtime, cli)]];
  if (platform === 'win32') files.push(['springfield.cmd', wrapperCmd(runtime, cli)]);
  for (const [name, text] of files) {
    const path = join(bin, name);
    if (currentText(path) !== text) replaceFile(path, text, 0o755);
  }
  return join(bin, 'springfield');
}

function currentText(path: string): string | undefined {
  try {
    return lstatSync(path).isFile() ? readFileSync(path, 'utf8') : undefined;
  } catch {
    return undefined;
  }
}

export interface PathSetting {
  /** The wrapper the link points at (writeCliWrappers' result). */
  readonly wrapper: string;
  /** The user's home folder. */
  readonly home: string;
  /** The PATH the user's shells have (the extension host's, which VS Code takes from the login shell). */
  readonly path: string | undefined;
  readonly platform?: NodeJS.Platform;
}

export interface InstallResult {
  /** `installed` (the link was made), `present` (it was there already). */
  readonly outcome: 'installed' | 'present';
  readonly link: string;
  /** Whether the link's folder is on PATH; when not, `message` says how to put it there. */
  readonly onPath: boolean;
  readonly message: string;
}

export interface UninstallResult {
  readonly outcome: 'removed' | 'absent';
  readonly links: readonly string[];
  readonly message: string;
}

/** Folders the link may go into, in order of preference: ~/.local/bin (XDG), then ~/bin. */
export function candidateFolders(home: string): string[] {
  return [join(home, '.local', 'bin'), join(home, 'bin')];
}

function onPath(dir: string, path: string | undefined): boolean {
  const target = resolve(dir);
  return (path ?? '').split(':').some((entry) => entry !== '' && resolve(entry) === target);
}

/**
 * Links `springfield` to the wrapper in the first candidate folder on PATH, else in ~/.local/bin (made
 * if missing), saying how to add it to PATH. Refuses (RefusedError, one line) a `springfield` there that
 * is not this editor's link, whatever it is, and (EnvironmentError) a folder that is not the user's
 * own or that others may write, where someone else could have planted it. The link is created
 * exclusively: something that appears meanwhile is never replaced.
 */
export function installCliLink(s: PathSetting): InstallResult {
  if ((s.platform ?? process.platform) === 'win32') {
    throw new RefusedError(
      'unsupported_platform',
      `installing the springfield command on PATH is not offered on Windows: install the CLI with npm install -g ${CLI_PACKAGE} (the editor's terminals have springfield already)`,
    );
  }
  const candidates = candidateFolders(s.home);
  const dir = candidates.find((d) => onPath(d, s.path)) ?? candidates[0]!;
  const visible = onPath(dir, s.path);
  ensureUsableFolder(dir);
  const link = join(dir, 'springfield');
  const present = linkState(link, s.wrapper);
  if (present === 'ours')
    return {
      outcome: 'present',
      link,
      onPath: visible,
      message: `${link} is already the springfield command of this editor.${visible ? '' : addToPath(dir)}`,
    };
  if (present !== 'absent') throw notOurs(link, present);
  try {
    symlinkSync(s.wrapper, link);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST')
      throw new RefusedError(
        'file_appeared',
        `${link} appeared while installing; left alone (run the command again to see what it is)`,
      );
    throw new EnvironmentError('unwritable', `${link}: cannot create the link (${messageOf(err)})`);
  }
  return {
    outcome: 'installed',
    link,
    onPath: visible,
    message: visible
      ? `Installed the springfield command: ${link} (runs the CLI with this editor's runtime). Open a new terminal to use it.`
      : `Installed the springfield command in ${dir}, which is not on your PATH.${addToPath(dir)}`,
  };
}

/** Removes this editor's links from the candidate folders; anything else named springfield is left alone and said so. */
export function uninstallCliLink(s: PathSetting): UninstallResult {
  const removed: string[] = [];
  const others: string[] = [];
  for (const dir of candidateFolders(s.home)) {
    const link = join(dir, 'springfield');
    const state = linkState(link, s.wrapper);
    if (state === 'ours') {
      try {
        unlinkSync(link);
      } catch (err) {
        throw new EnvironmentError('unwritable', `${link}: cannot remove the link (${messageOf(err)})`);
      }
      removed.push(link);
    } else if (state !== 'absent') {
      others.push(`${link} (${state})`);
    }
  }
  const leftAlone = others.length > 0 ? ` Left alone, not this editor's: ${others.join(', ')}.` : '';
  if (removed.length > 0)
    return {
      outcome: 'removed',
      links: removed,
      message: `Removed the springfield command: ${removed.join(', ')}.${leftAlone}`,
    };
  return {
    outcome: 'absent',
    links: [],
    message: `The springfield command of this editor is not installed in ${candidateFolders(s.home).join(' or ')}.${leftAlone}`,
  };
}

/** 'absent', 'ours' (a link to `wrapper`), or what is there instead, in words. */
function linkState(link: string, wrapper: string): 'absent' | 'ours' | string {
  let st: Stats;
  try {
    st = lstatSync(link);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 'absent';
    throw new EnvironmentError('unreadable', `${link}: cannot inspect (${messageOf(err)})`);
  }
  if (!st.isSymbolicLink()) return st.isFile() ? 'a file' : 'not a file';
  const target = readlinkSync(link);
  return target === wrapper ? 'ours' : `a link to ${target}`;
}

function notOurs(link: string, what: string): RefusedError {
  return new RefusedError(
    'not_ours',
    `${link} exists and is not this editor's springfield command (${what}); Springfield does not overwrite it: remove it yourself to install, or keep using it`,
  );
}

function addToPath(dir: string): string {
  return ` To use it, add the folder to PATH in your shell's profile (~/.profile, ~/.bashrc or ~/.zshrc): export PATH="${dir}:$PATH"`;
}

/**
 * The folder exists (made if not), and is the user's own and not writable by others: a real folder,
 * or a link of the user's to one (dotfile managers link ~/.local/bin), never another user's link.
 */
function ensureUsableFolder(dir: string): void {
  let st: Stats;
  try {
    st = lstatSync(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT')
      throw new EnvironmentError('directory_unusable', `${dir}: cannot inspect (${messageOf(err)})`);
    ensureOwnDirectory(dir);
    return;
  }
  const uid = process.getuid?.();
  const gid = process.getgid?.();
  if (st.isSymbolicLink()) {
    if (uid !== undefined && st.uid !== uid)
      throw new EnvironmentError(
        'unsafe_directory',
        `${dir} is a link owned by another user (uid ${st.uid}); refusing to install through it`,
      );
    try {
      st = statSync(dir);
    } catch (err) {
      throw new EnvironmentError(
        'unsafe_directory',
        `${dir} is a link to nothing usable (${messageOf(err)}); refusing to install through it`,
      );
    }
  }
  if (!st.isDirectory())
    throw new EnvironmentError('unsafe_directory', `${dir} is not a directory; refusing to install into it`);
  if (uid !== undefined && st.uid !== uid)
    throw new EnvironmentError(
      'unsafe_directory',
      `${dir} belongs to another user (uid ${st.uid}); refusing to install into it`,
    );
  const othersWrite = (st.mode & 0o002) !== 0 || ((st.mode & 0o020) !== 0 && st.gid !== gid);
  if (othersWrite)
    throw new EnvironmentError(
      'unsafe_directory',
      `${dir} may be written by other users (mode ${(st.mode & 0o777).toString(8)}); refusing to install into it (chmod go-w ${dir})`,
    );
}
