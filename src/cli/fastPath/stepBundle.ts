import { openStepStore } from '../../core/index.ts';
import { dispatch } from '../dispatch.ts';
import { STEP_MODULES } from '../commands/modules.ts';
import { exitWhenDone, processIo } from './stdio.ts';

/**
 * The step commands and --version, bundled as CommonJS (builds.ts): no ES module loader to start and
 * nothing else to load. The launcher (launcher.ts) runs it with a code cache. A step command is
 * synchronous under its promise (the database is closed when it resolves), so nothing keeps the
 * process once it is done.
 */
// Nothing else in this process opens the database, so it may use the runtime's own SQLite (docs/cli-cost.md, "The built-in SQLite").
exitWhenDone(
  dispatch(process.argv.slice(2), processIo(), STEP_MODULES, (settings) =>
    openStepStore(settings, { builtinSqlite: true }),
  ),
);
