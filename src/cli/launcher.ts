import { enableCompileCache } from 'node:module';

// The `springfield` executable. Agents call it many times a minute, so compiled code is cached on
// disk (Node's compile cache; NODE_DISABLE_COMPILE_CACHE=1 turns it off) before the CLI loads.
enableCompileCache?.();
// eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded synchronously, after the cache is on
require('./springfield.cjs');
