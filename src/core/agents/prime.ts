import { readFileSync } from 'node:fs';
import { RefusedError } from '../errors.ts';
import { createExclusively, replaceFile, statNoLink } from '../safeFiles.ts';

export const PRIME_BEGIN = '<!-- springfield:begin -->';
export const PRIME_END = '<!-- springfield:end -->';

/** The protocol for an agent that Springfield did not start (a session someone opened by hand). */
export function primeText(): string {
  return `# Springfield: how work is coordinated in this repository

Work here is planned and tracked by Springfield: epics → plans → steps → checklist items, in one
state store that every worktree of the repository reaches. Use the \`springfield\` CLI for all of it
(add \`--json\` for one JSON document on stdout); never edit \`.springfield/\` by hand. Exit codes:
0 done, 1 refused by the rules (read the message), 2 bad input, 3 environment.

## Start every session with

    springfield context

It prints what this worktree is working on: the epic's intent, approach and constraints, the step
you hold and its checklist, review signals, verification failures, what to read, and the exact next
commands. \`springfield epic list\` and \`springfield show\` give the overview.

## Building a step (Ralph)

1. \`springfield claim <plan.md>\` takes the next ready step under a lease (nothing ready is not an error).
2. \`springfield start <plan.md> <step>\`, then work on that step only; \`springfield heartbeat <plan.md> <step>\` renews the lease.
3. Tick each item when it is done: \`springfield update <plan.md> <step> --task N completed\`
   (N counts from 0; also \`--test N\`, \`--checkpoint N\`, \`--all completed\`).
4. Run the tests, then \`springfield commit -m "<what you did>"\`: it commits everything with
   Springfield's trailers and completes the step (refused while an item is open).

## Planning an epic (Lisa)

Research read-only, then write a plan file: \`# Plan: <title>\`, optional \`## Approach\` and
\`## Constraints\`, steps as \`## Step N: <title> {#step-N}\` (substeps \`### Step N.M: …\`), each with
\`**Depends on:** none\` or \`#step-1, …\` and \`- [ ] …\` items under \`**Tasks:**\`, \`**Tests:**\`,
\`**Checkpoints:**\`. Then \`springfield plan propose <epic> <plan.md>\`. A person approves plans;
a planner never approves its own.

## Reviewing an epic (Bart)

Read \`git diff <base>...HEAD\` against the plan and the handoff \`TODO-<epic>.md\`, then record
exactly one signal: \`springfield signal <epic> --type pass|implementation_failure|option_viability_failure|adr_invalidated --summary "<finding>" --location FILE:LINE [--note "<why>"]\`.

## As tools

\`springfield mcp\` serves the same operations to MCP clients
(\`claude mcp add springfield -- springfield mcp\`); in VS Code they are language-model tools.
`;
}

export interface PrimeWrite {
  readonly path: string;
  readonly action: 'created' | 'added' | 'updated' | 'unchanged';
}

/**
 * Adds or updates the marked Springfield section of an instructions file (AGENTS.md, CLAUDE.md):
 * created exclusively when absent, text outside the markers kept byte for byte, nothing written
 * when the section is already current, never through a symbolic link.
 */
export function writePrimeSection(path: string, body: string = primeText()): PrimeWrite {
  const section = `${PRIME_BEGIN}\n<!-- Written by \`springfield prime --write\`; edits between these markers are replaced. -->\n${body.trimEnd()}\n${PRIME_END}`;
  const stat = statNoLink(path, 'the file');
  if (!stat) {
    createExclusively(path, section + '\n');
    return { path, action: 'created' };
  }
  if (!stat.isFile()) throw new RefusedError('not_a_file', `${path}: not a regular file`);
  const text = readFileSync(path, 'utf8');
  const begin = text.indexOf(PRIME_BEGIN);
  const end = text.indexOf(PRIME_END);
  const again = (marker: string, from: number) => from >= 0 && text.indexOf(marker, from + marker.length) >= 0;
  if (begin < 0 !== end < 0 || end < begin || again(PRIME_BEGIN, begin) || again(PRIME_END, end)) {
    throw new RefusedError(
      'markers_broken',
      `${path}: its ${PRIME_BEGIN} / ${PRIME_END} markers are not one pair in order; fix them by hand — nothing was written`,
    );
  }
  let next: string;
  let action: PrimeWrite['action'];
  if (begin < 0) {
    const separator = text === '' ? '' : text.endsWith('\n\n') ? '' : text.endsWith('\n') ? '\n' : '\n\n';
    next = `${text}${separator}${section}\n`;
    action = 'added';
  } else {
    next = text.slice(0, begin) + section + text.slice(end + PRIME_END.length);
    action = 'updated';
  }
  if (next === text) return { path, action: 'unchanged' };
  replaceFile(path, next, stat.mode);
  return { path, action };
}
