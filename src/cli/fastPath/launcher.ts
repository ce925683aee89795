import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { runtimeTooOld } from '../../shared/runtime.ts';
import { privateCacheDir, runWithCodeCache } from './codeCache.ts';
import { isStepCommand } from './stepNames.ts';
import { exitWhenDone, processIo } from './stdio.ts';

/**
 * The `springfield` executable. Agents call the step commands many times a minute, so those run from
 * one CommonJS bundle (dist/springfield.cjs) with a code cache per command of everything it compiled
 * (codeCache.ts); every other command loads the whole CLI, ES modules under Node's compile cache, kept
 * in the same private per-user folder (`…/springfield-<uid>`, privateCacheDir), never in the shared
 * `node-compile-cache` itself, where another user could plant the code it loads. No cache when that
 * folder is not this user's alone. NODE_DISABLE_COMPILE_CACHE=1 turns both caches off.
 *
 * Whatever `node` ran it (the shebang takes the first on PATH), a runtime too old for the store is
 * told so in one line, exit 3, before any command runs: better-sqlite3 would crash it, and `--version`,
 * `--help` or `mcp` answering as if all were well would only defer the failure.
 */
const argv = process.argv.slice(2);
const word = argv[0] ?? '';
const tooOld = runtimeTooOld(process.version, process.versions.napi);
if (tooOld !== undefined) {
  process.stderr.write(`springfield: ${tooOld}\n`);
  process.exitCode = 3;
} else if (isStepCommand(word) || word === '--version' || word === '-V') {
  runWithCodeCache(join(__dirname, 'springfield.cjs'), isStepCommand(word) ? word : 'version', require);
} else {
  const dir = privateCacheDir(process.env);
  // (enableCompileCache is absent before Node 22.3: the CLI then says what it needs)
  if (dir !== undefined) process.getBuiltinModule?.('node:module').enableCompileCache?.(dirname(dir));
  const main = pathToFileURL(join(__dirname, 'full', 'main.js')).href;
  exitWhenDone(import(main).then((m: typeof import('../main.ts')) => m.runCli(argv, processIo())));
}
