import { existsSync, realpathSync } from 'node:fs';
import { isAbsolute, relative, resolve, sep } from 'node:path';
import { UsageError } from '../core/index.ts';
import type { CliContext } from './cliContext.ts';

/** A place in the code as the store keeps it: the repository-relative file, its lines, and a note. */
export interface CodePlace {
  file: string;
  line: number;
  endLine: number | null;
  note: string | null;
}

/**
 * `file:line[:end]` given on the command line as a place in the repository: the path resolved from
 * the current directory (through links) and made relative to the worktree root, with the line numbers
 * checked. Anything outside the repository, or a bad line, is a usage error.
 */
export function repoPlace(ctx: CliContext, file: string, line: string, end: string | undefined): CodePlace {
  const root = ctx.location.worktreeRoot ?? ctx.location.mainRoot ?? ctx.cwd;
  const abs = resolve(ctx.cwd, file);
  const real = existsSync(abs) ? realpathSync(abs) : abs;
  const rel = relative(root, real);
  if (rel === '' || rel.startsWith('..') || isAbsolute(rel))
    throw new UsageError('location_outside_repository', `${file}: location is outside the repository ${root}`);
  const start = Number(line);
  const stop = end !== undefined ? Number(end) : null;
  if (
    !Number.isSafeInteger(start) ||
    start > 10_000_000 ||
    (stop !== null && (!Number.isSafeInteger(stop) || stop > 10_000_000))
  )
    throw new UsageError('bad_location', `${file}:${line}: line number out of range`);
  if (start < 1) throw new UsageError('bad_location', `${file}:${line}: lines start at 1`);
  if (stop !== null && stop < start)
    throw new UsageError('bad_location', `${file}:${line}:${end}: the end line is before the start line`);
  return { file: rel.split(sep).join('/'), line: start, endLine: stop, note: null };
}
