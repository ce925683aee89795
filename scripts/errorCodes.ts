// Writes the list of error codes in docs/cli-contract.md from ERROR_CODES (src/core/errors.ts), by
// category with its exit code; test/unit/errorCodes.test.ts fails when the two differ.
//
// Usage: node scripts/errorCodes.ts
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { exitCodeOf } from '../src/cli/dispatch.ts';
import { type ErrorCategory, type ErrorCode, ERROR_CODES } from '../src/core/errors.ts';

export const CONTRACT = join(import.meta.dirname, '..', 'docs', 'cli-contract.md');
const BEGIN = '<!-- error codes: written by scripts/errorCodes.ts -->';
const END = '<!-- end of error codes -->';

/** The list as the doc holds it: one line per category, codes in alphabetical order. */
export function renderErrorCodes(): string {
  const codes = (Object.keys(ERROR_CODES) as ErrorCode[]).sort();
  const categories: readonly ErrorCategory[] = ['refused', 'usage', 'environment'];
  const lines = categories.map((category) => {
    const own = codes.filter((c) => ERROR_CODES[c] === category);
    return `- ${category}, exit ${exitCodeOf(own[0] as ErrorCode)}: ${own.map((c) => `\`${c}\``).join(', ')}`;
  });
  return [BEGIN, ...lines, '- anything else, exit 70: `internal_error`', END].join('\n');
}

/** The list now in the doc, or null when it has none. */
export function documentedErrorCodes(text: string): string | null {
  const from = text.indexOf(BEGIN);
  const to = text.indexOf(END);
  return from < 0 || to < from ? null : text.slice(from, to + END.length);
}

if (import.meta.main) {
  const text = readFileSync(CONTRACT, 'utf8');
  const now = documentedErrorCodes(text);
  if (now === null) {
    console.error(`errorCodes: ${CONTRACT} has no '${BEGIN}' … '${END}' block`);
    process.exitCode = 1;
  } else {
    writeFileSync(CONTRACT, text.replace(now, renderErrorCodes()));
    console.log(`errorCodes: ${Object.keys(ERROR_CODES).length} codes written to ${CONTRACT}`);
  }
}
