import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { runWithCodeCache } from './codeCache.ts';
import { isStepCommand } from './commands/stepNames.ts';
import { exitWhenDone, processIo } from './stdio.ts';

/**
 * The `springfield` executable. Agents call the step commands many times a minute, so those run from
 * one CommonJS bundle (dist/springfield.cjs) with a code cache per command of everything it compiled
 * (codeCache.ts); every other command loads the whole CLI, ES modules under Node's compile cache.
 * NODE_DISABLE_COMPILE_CACHE=1 turns both caches off.
 */
const argv = process.argv.slice(2);
const word = argv[0] ?? '';
if (isStepCommand(word) || word === '--version' || word === '-V') {
  runWithCodeCache(join(__dirname, 'springfield.cjs'), isStepCommand(word) ? word : 'version', require);
} else {
  process.getBuiltinModule?.('node:module').enableCompileCache?.(); // (absent before Node 22.3: the CLI then says what it needs)
  const main = pathToFileURL(join(__dirname, 'full', 'main.js')).href;
  exitWhenDone(import(main).then((m: typeof import('./main.ts')) => m.runCli(argv, processIo())));
}
