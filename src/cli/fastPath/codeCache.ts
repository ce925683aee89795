import {
  closeSync,
  fstatSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { Script } from 'node:vm';

/**
 * How a bundle run by runWithCodeCache starts: it is written as the function expression Node's loader
 * wraps a CommonJS module in (esbuild.mjs adds it), and compiled as it is read, with no copy of its text.
 */
export const BUNDLE_WRAPPER = '(function (exports, require, module, __filename, __dirname) { ';

/**
 * Runs the CommonJS bundle `file` (which must not `import()`, written as BUNDLE_WRAPPER … `});`) as Node's loader would, with a V8 code
 * cache of what the run compiled. Node's compile cache keeps only a module's top level: every
 * function a command then calls is compiled again in each process, and a short command spends more
 * time on that than on its own work. This cache is taken at exit, after the command ran, so it holds
 * those functions too.
 *
 * One cache per `name` (a command: each compiles its own path), kept where Node keeps its compile
 * cache and switched off with it (see cacheDir). It is written only by a run that succeeded and found
 * none it could use, read only if this user owns it, and named by the file's size and modification
 * time and by the runtime, so a rebuilt bundle or another Node starts a new one; V8 checks its own
 * version, flags and the source's length again and rejects a cache that does not fit. Any failure to
 * read or write it just means no cache. `require` must resolve as it would in `file`'s directory.
 */
export function runWithCodeCache(
  file: string,
  name: string,
  require: NodeJS.Require,
  env: NodeJS.ProcessEnv = process.env,
): void {
  const fd = openSync(file, 'r');
  let source: string;
  let cacheFile: string | undefined;
  try {
    const stat = fstatSync(fd);
    source = readFileSync(fd, 'utf8');
    const dir = cacheDir(env);
    cacheFile =
      dir === undefined
        ? undefined
        : join(dir, `${cacheKey(file, name)}-${stat.size}-${Math.trunc(stat.mtimeMs)}.cache`);
  } finally {
    closeSync(fd);
  }
  const cachedData = cacheFile === undefined ? undefined : readOwnFile(cacheFile);
  if (!source.startsWith(BUNDLE_WRAPPER)) throw new Error(`${file}: not a bundle written as a function expression`);
  const script = new Script(source, { filename: file, cachedData });
  if (cacheFile !== undefined && (cachedData === undefined || script.cachedDataRejected)) {
    const target = cacheFile;
    process.once('exit', (code) => {
      if (code === 0) save(target, cacheKey(file, name), script.createCachedData(), env);
    });
  }
  const wrapper = script.runInThisContext() as (
    exports: object,
    require: NodeJS.Require,
    module: object,
    filename: string,
    dirname: string,
  ) => void;
  const module = { exports: {} };
  wrapper.call(module.exports, module.exports, require, module, file, dirname(file));
}

/**
 * `<Node's compile cache directory>/springfield-<uid>/<version>-<arch>`: NODE_COMPILE_CACHE, else
 * `node-compile-cache` in the temporary directory, which other users share; none when
 * NODE_DISABLE_COMPILE_CACHE is set. The `springfield-<uid>` directory is this user's alone (see
 * privateCacheDir). (The temporary directory is worked out as os.tmpdir() does, which spares loading
 * node:os on POSIX.)
 */
export function cacheDir(env: NodeJS.ProcessEnv): string | undefined {
  if (env.NODE_DISABLE_COMPILE_CACHE) return undefined;
  const root = env.NODE_COMPILE_CACHE || join(tempDir(env), 'node-compile-cache');
  const uid = process.getuid?.();
  return join(root, uid === undefined ? 'springfield' : `springfield-${uid}`, `${process.version}-${process.arch}`);
}

/**
 * cacheDir(env), made if need be, when it may be written and read: the per-user directory is a real
 * directory (not a link) of this user's that no one else may read or write, made 0700 and never
 * through a link. In the shared temporary directory its parent `node-compile-cache` must be a real
 * directory of this user's that no one else may write (made 0700 if missing; Node makes it 0755),
 * since whoever owns or may write the parent can swap the folder inside it; a NODE_COMPILE_CACHE the
 * user chose is trusted as theirs. Undefined (no cache) otherwise.
 */
export function privateCacheDir(env: NodeJS.ProcessEnv): string | undefined {
  const dir = cacheDir(env);
  if (dir === undefined) return undefined;
  const user = dirname(dir);
  const root = dirname(user);
  try {
    if (env.NODE_COMPILE_CACHE) mkdirSync(root, { recursive: true });
    else if (!ownDir(root, 0o022)) return undefined;
    if (!ownDir(user, 0o077)) return undefined;
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    return dir;
  } catch {
    return undefined;
  }
}

/** Makes `dir` 0700 if it is missing (its parent must exist); whether it is a real directory of this user's with none of the mode bits `others` (other users' access). */
function ownDir(dir: string, others: number): boolean {
  try {
    mkdirSync(dir, { mode: 0o700 });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  const st = lstatSync(dir);
  const uid = process.getuid?.();
  return (
    st.isDirectory() &&
    (uid === undefined || st.uid === uid) &&
    (process.platform === 'win32' || (st.mode & others) === 0)
  );
}

function tempDir(env: NodeJS.ProcessEnv): string {
  if (process.platform === 'win32') return process.getBuiltinModule('node:os').tmpdir();
  const dir = env.TMPDIR || env.TMP || env.TEMP || '/tmp';
  return dir.length > 1 && dir.endsWith('/') ? dir.slice(0, -1) : dir;
}

/** Everything in a cache file's name before the version of the file it is for (see save). */
function cacheKey(file: string, name: string): string {
  return `${fileKey(file)}-${name}`;
}

/** The cache file's contents, if it exists and belongs to this user (a planted cache would run as code). */
function readOwnFile(path: string): Buffer | undefined {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    return undefined;
  }
  try {
    const stat = fstatSync(fd);
    const uid = process.getuid?.();
    if (uid !== undefined && stat.uid !== uid) return undefined;
    return readFileSync(fd);
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}

/**
 * Writes the cache atomically (many agents start at once) and drops the caches `key` had for other
 * versions of the file. Only into a directory of this user's that nobody else may write, through a
 * temporary file of a fresh random name created exclusively, so nothing is written through a link
 * someone planted in the shared temporary directory.
 */
function save(path: string, key: string, data: Buffer, env: NodeJS.ProcessEnv): void {
  try {
    const dir = dirname(path);
    if (privateCacheDir(env) !== dir) return;
    // Exclusive creation is what keeps a planted link out (node:crypto would cost every call its load).
    const temp = `${path}.${process.pid}-${Math.random().toString(36).slice(2)}.tmp`;
    const fd = openSync(temp, 'wx', 0o600);
    try {
      writeSync(fd, data);
    } finally {
      closeSync(fd);
    }
    renameSync(temp, path);
    const base = path.slice(dir.length + 1);
    for (const other of readdirSync(dir)) {
      if (other !== base && other.startsWith(`${key}-`) && other.endsWith('.cache')) unlinkSync(join(dir, other));
    }
  } catch {
    // no cache this time: the command itself already succeeded
  }
}

/** A short stable key for the file's path (FNV-1a), so two installations keep separate caches. */
function fileKey(file: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < file.length; i++) h = Math.imul(h ^ file.charCodeAt(i), 0x01000193) >>> 0;
  return h.toString(16).padStart(8, '0');
}
