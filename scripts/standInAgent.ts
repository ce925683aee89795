// A stand-in for a coding agent, for tests and the demo: it reads only its context file (the role's
// prompt first, then the context) and does what the prompt says, section by section: it runs the
// commands of every ```sh block (split into argv, never through a shell), filling in the <…> parts
// a model would fill, writes the plan the prompt teaches (Lisa) or a file for the step (Ralph).
// Anything it cannot follow — no instructions, a placeholder it does not know, shell syntax, a
// command that fails — ends it with exit 1 and one line saying what, so a broken prompt fails a test.
//
//   node scripts/standInAgent.ts [--pace SECONDS] <context-file>
//     (as an agent command: ["node", "…/standInAgent.ts", "$SPRINGFIELD_CONTEXT_FILE"]); --pace waits that
//     long before each command it runs, so a person watching the editor sees each tick and commit land.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { messageOf } from '../src/shared/errorMessage.ts';

const CLI = resolve(dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'cli.cjs');

class Refusal extends Error {}

interface Section {
  readonly heading: string;
  readonly body: string;
}

interface Facts {
  role: 'lisa' | 'ralph' | 'ralph-fix' | 'bart';
  epicTitle: string;
  stepTitle: string;
  /** From the last diff read (Bart): a line the change added. */
  addedLine: { file: string; line: number } | null;
  planExample: string | null;
}

/** The arguments: an optional `--pace SECONDS`, then the context file. */
export function parseArgs(argv: readonly string[]): { file: string | undefined; paceMs: number } {
  const args = [...argv];
  let paceMs = 0;
  const at = args.indexOf('--pace');
  if (at >= 0) {
    const seconds = Number(args[at + 1]);
    if (!(seconds >= 0 && seconds <= 60))
      throw new Refusal(`--pace takes seconds between 0 and 60, got '${args[at + 1] ?? ''}'`);
    paceMs = seconds * 1000;
    args.splice(at, 2);
  }
  return { file: args[0], paceMs };
}

function main(): void {
  const { file: given, paceMs } = parseArgs(process.argv.slice(2));
  pace = paceMs;
  const file = given ?? process.env.SPRINGFIELD_CONTEXT_FILE;
  if (!file || !existsSync(file))
    throw new Refusal(`no context file (argument or SPRINGFIELD_CONTEXT_FILE): ${file ?? '(none)'}`);
  const text = readFileSync(file, 'utf8');
  const separator = text.indexOf('\n---\n');
  if (separator < 0) throw new Refusal(`${file}: no role instructions before the context (no '---' separator)`);
  const prompt = text.slice(0, separator);
  const context = text.slice(separator + 5);
  const facts = readFacts(prompt, context);
  log(`stand-in ${facts.role}: following ${file}`);
  const sections = splitSections(prompt);
  let ran = 0;
  for (const section of sections) {
    if (facts.role === 'lisa' && /write the plan/i.test(section.heading)) writePlan(section, facts, sections);
    if (facts.role === 'ralph' && /do the work/i.test(section.heading)) doTheWork(facts);
    if (facts.role === 'ralph-fix' && /\bfix it\b/i.test(section.heading)) doTheWork(facts);
    for (const line of shellLines(section.body)) {
      run(split(fillPlaceholders(line, facts)), facts);
      ran++;
    }
  }
  if (ran === 0) throw new Refusal('the instructions name no command to run');
  log(`stand-in ${facts.role}: done (${ran} commands)`);
}

function readFacts(prompt: string, context: string): Facts {
  const first = prompt.split('\n', 1)[0] ?? '';
  const who = /^# You are (Lisa|Ralph|Bart)\b/.exec(first)?.[1];
  if (!who) throw new Refusal(`the instructions do not say which role this is: '${first}'`);
  const role = who === 'Ralph' && /: fix epic/.test(first) ? 'ralph-fix' : (who.toLowerCase() as Facts['role']);
  const example = /```markdown\n([\s\S]*?)\n```/.exec(prompt)?.[1] ?? null;
  return {
    role,
    epicTitle: /^## Epic sf-[0-9a-f]+: (.+)$/m.exec(context)?.[1] ?? 'Stand-in epic',
    stepTitle: /^## Step [^:]+: (.+?) \[/m.exec(context)?.[1] ?? 'the step',
    addedLine: null,
    planExample: example,
  };
}

function splitSections(prompt: string): Section[] {
  return prompt
    .split(/^## /m)
    .slice(1)
    .map((chunk) => {
      const newline = chunk.indexOf('\n');
      return {
        heading: chunk.slice(0, newline < 0 ? undefined : newline).trim(),
        body: newline < 0 ? '' : chunk.slice(newline + 1),
      };
    });
}

function shellLines(body: string): string[] {
  return [...body.matchAll(/```sh\n([\s\S]*?)```/g)].flatMap((m) =>
    (m[1] ?? '')
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l && !l.startsWith('#')),
  );
}

/** Lisa: the example plan the prompt teaches, titled for this epic, at the path the propose command names. */
function writePlan(section: Section, facts: Facts, sections: readonly Section[]): void {
  const rel = /`([^`]+\.md)`/.exec(section.heading)?.[1];
  if (!rel) throw new Refusal(`'${section.heading}' names no plan file`);
  if (!facts.planExample) throw new Refusal('the instructions teach no plan format (no ```markdown example)');
  const proposes = sections
    .flatMap((s) => shellLines(s.body))
    .some((l) => l.startsWith('springfield plan propose ') && l.endsWith(` ${rel}`));
  if (!proposes) throw new Refusal(`the plan is written to ${rel}, but no 'springfield plan propose … ${rel}' follows`);
  const plan = facts.planExample.replace(/^# Plan: .*$/m, `# Plan: ${facts.epicTitle}`);
  mkdirSync(dirname(resolve(rel)), { recursive: true });
  writeFileSync(resolve(rel), plan + '\n');
  log(`wrote ${rel}`);
}

/** Ralph: a change for the step (what a model's edit would be), in this worktree. */
function doTheWork(facts: Facts): void {
  // Named for the epic too: two epics built side by side in one repository must not both add the same file.
  const epic = process.env.SPRINGFIELD_EPIC ? `-${process.env.SPRINGFIELD_EPIC}` : '';
  const name = facts.role === 'ralph' ? `${process.env.SPRINGFIELD_STEP ?? 'step'}${epic}` : `fix-${Date.now()}${epic}`;
  mkdirSync('standin', { recursive: true });
  writeFileSync(join('standin', `${name}.txt`), `${facts.role === 'ralph' ? facts.stepTitle : 'fix'}\n`);
  log(`wrote standin/${name}.txt`);
}

/** The <…> parts of a command line a model fills in; anything else is a prompt the stand-in cannot follow. */
function fillPlaceholders(line: string, facts: Facts): string {
  return line.replace(/<([^<>]+)>(?::<([^<>]+)>)?/g, (whole, a: string, b: string | undefined) => {
    if (a === 'file' && b === 'line') {
      if (!facts.addedLine) throw new Refusal(`'${whole}' needs a line of the diff, but no diff was read before`);
      return `${facts.addedLine.file}:${facts.addedLine.line}`;
    }
    if (b !== undefined) throw new Refusal(`unknown placeholder '${whole}'`);
    if (/^what you did/.test(a)) return `Stand-in: ${facts.stepTitle}`;
    if (/^what you fixed/.test(a)) return 'Stand-in: fix the review findings';
    if (/^what you found/.test(a)) return `Stand-in research for ${facts.epicTitle}`;
    if (/^your finding/.test(a)) return 'Stand-in review: the change does what the plan says';
    throw new Refusal(`unknown placeholder '${whole}' in: ${line}`);
  });
}

let pace = 0;

function run(argv: string[], facts: Facts): void {
  const [program, ...args] = argv as [string, ...string[]];
  if (pace > 0) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, pace);
  log(`$ ${argv.join(' ')}`);
  const [file, prefix] = program === 'springfield' ? [process.execPath, [CLI]] : [program, []];
  let out: string;
  try {
    out = execFileSync(file, [...prefix, ...args], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
      maxBuffer: 64 * 1024 * 1024,
    });
  } catch (err) {
    const e = err as { status?: number; stderr?: string; message: string };
    throw new Refusal(
      `'${argv.join(' ')}' failed (exit ${e.status ?? '?'}): ${(e.stderr ?? e.message).trim().split('\n').at(-1) ?? ''}`,
    );
  }
  if (program === 'git' && args[0] === 'diff' && !args.includes('--stat')) facts.addedLine = firstAddedLine(out);
  if (out.trim())
    log(
      out
        .trimEnd()
        .split('\n')
        .slice(0, 5)
        .map((l) => `  ${l}`)
        .join('\n'),
    );
}

function firstAddedLine(diff: string): { file: string; line: number } | null {
  let file: string | null = null;
  let line = 0;
  for (const l of diff.split('\n')) {
    if (l.startsWith('+++ ')) file = l.startsWith('+++ b/') ? l.slice(6) : null;
    else if (l.startsWith('@@')) line = Number(/\+(\d+)/.exec(l)?.[1] ?? 0);
    else if (file && line > 0) {
      if (l.startsWith('+')) return { file, line };
      if (!l.startsWith('-')) line++;
    }
  }
  return null;
}

/** Words of one command line as a shell would split them, refusing anything that needs a shell. */
export function split(line: string): string[] {
  const words: string[] = [];
  let word = '';
  let started = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i] as string;
    if (c === "'") {
      const end = line.indexOf("'", i + 1);
      if (end < 0) throw new Refusal(`unterminated quote in: ${line}`);
      word += line.slice(i + 1, end);
      started = true;
      i = end;
    } else if (c === '"') {
      let j = i + 1;
      for (; j < line.length && line[j] !== '"'; j++) {
        if (line[j] === '\\' && j + 1 < line.length) j++;
        if (line[j] === '$' || line[j] === '`') throw new Refusal(`needs a shell (expansion inside quotes): ${line}`);
        word += line[j];
      }
      if (j >= line.length) throw new Refusal(`unterminated quote in: ${line}`);
      started = true;
      i = j;
    } else if (c === ' ' || c === '\t') {
      if (started) words.push(word);
      word = '';
      started = false;
    } else if ('|&;<>()$`*?'.includes(c)) {
      throw new Refusal(`needs a shell ('${c}'): ${line}`);
    } else {
      word += c === '\\' && i + 1 < line.length ? line[++i] : c;
      started = true;
    }
  }
  if (started) words.push(word);
  return words;
}

function log(line: string): void {
  process.stdout.write(line + '\n');
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    main();
  } catch (err) {
    process.stderr.write(`stand-in agent: ${messageOf(err)}\n`);
    process.exitCode = 1;
  }
}
