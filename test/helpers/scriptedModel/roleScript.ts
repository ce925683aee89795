// The scripted model's mind: what a model given Springfield's kickoff prompt does, one tool call at a
// time, knowing nothing of Springfield but what the prompt and the context file it names say. It
// learns its folder with the shell (`pwd`), reads the context file with the CLI's own file-read tool,
// then follows the role's prompt section by section: writes the plan the prompt teaches (Lisa), writes
// the files the step's tasks name (Ralph), reads the diff and points at an added line (Bart), and runs
// every command of the prompt's ```sh blocks through the CLI's shell tool, filling the <…> parts.
//
// Stateless: each request carries the conversation, so the next action is found by replaying the
// script over the tool results so far (nextAction). Anything it cannot follow ends the conversation
// with a sentence saying why, as a model would, and the run then shows no progress.

export type Action =
  | { readonly kind: 'bash'; readonly command: string }
  | { readonly kind: 'read'; readonly path: string }
  | { readonly kind: 'write'; readonly path: string; readonly relative: string; readonly content: string };

export type Turn = Action | { readonly kind: 'final'; readonly text: string };

type Script = Generator<Action, string, string>;

/** A conversation Springfield's kickoff began, as one request carries it: the kickoff and the tool results so far. */
export interface Conversation {
  readonly kickoff: string;
  readonly results: readonly string[];
}

/** The script's next turn in `conversation`; any other request (a title, a quota check) gets a short answer. */
export function turnFor(conversation: Conversation | null): Turn {
  return conversation
    ? nextAction(conversation.kickoff, conversation.results)
    : { kind: 'final', text: 'Springfield agent session' };
}

/** The folder the agent is in, as its first command (`pwd`) answered; null before it has answered. */
export function folderOf(results: readonly string[]): string | null {
  const first = results[0];
  return first === undefined ? null : (first.trim().split('\n').at(-1)?.trim() ?? '');
}

/** The next turn of the conversation that began with `kickoff` and has had these tool results so far. */
export function nextAction(kickoff: string, results: readonly string[]): Turn {
  const script = roleScript(kickoff);
  let step = script.next();
  for (const result of results) {
    if (step.done) break;
    step = script.next(result);
  }
  return step.done ? { kind: 'final', text: step.value } : step.value;
}

/** True for a conversation this script plays: Springfield's kickoff names a role and a context file. */
export function isKickoff(text: string): boolean {
  return /started by Springfield/.test(text);
}

function* roleScript(kickoff: string): Script {
  const folder = folderOf([yield { kind: 'bash', command: 'pwd' }]) ?? '';
  if (!folder.startsWith('/')) return `I could not tell which folder I am in: ${folder}`;
  const path = /\bfile (\/[^\s:"]+\.md)\b/.exec(kickoff)?.[1];
  const raw = path ? yield { kind: 'read', path } : yield { kind: 'bash', command: 'cat "$SPRINGFIELD_CONTEXT_FILE"' };
  const text = withoutLineNumbers(raw);
  const separator = text.indexOf('\n---\n');
  const first = text.split('\n', 1)[0] ?? '';
  const who = /^# You are (Lisa|Ralph|Bart)\b/.exec(first)?.[1];
  if (separator < 0 || !who)
    return `I could not read my instructions from ${path ?? 'the context file'}: ${raw.trim().split('\n')[0]?.slice(0, 300) ?? ''}`;
  const prompt = text.slice(0, separator);
  const context = text.slice(separator + 5);
  const facts: Facts = {
    epicTitle: /^## Epic sf-[0-9a-f]+: (.+)$/m.exec(context)?.[1] ?? 'the epic',
    stepTitle: /^## Step [^:]+: (.+?) \[/m.exec(context)?.[1] ?? 'the step',
    addedLine: null,
  };
  const fix = who === 'Ralph' && /: fix epic/.test(first);
  let commands = 0;
  for (const section of sections(prompt)) {
    if (who === 'Lisa' && /write the plan/i.test(section.heading)) {
      const plan = planFrom(section.heading, prompt, facts);
      if (typeof plan === 'string') return plan;
      yield* write(folder, plan.path, plan.text);
    }
    if (who === 'Ralph' && (fix ? /\bfix it\b/i : /do the work/i).test(section.heading)) {
      for (const file of workFiles(context, fix)) yield* write(folder, file.path, file.content);
    }
    for (const line of shellLines(section.body)) {
      const command = fill(line, facts);
      if (typeof command !== 'string') return command.refusal;
      const out = yield { kind: 'bash', command };
      commands++;
      if (/^git diff\b/.test(command) && !command.includes('--stat')) facts.addedLine = firstAddedLine(out);
    }
  }
  return commands === 0
    ? 'My instructions name no command to run, so I stopped.'
    : `Done: I followed the ${who === 'Lisa' ? 'planning' : who === 'Bart' ? 'review' : 'build'} instructions (${commands} commands).`;
}

/** A new file, its folder made first as the prompt says (some CLIs' create tools need the folder to exist). */
function* write(folder: string, relative: string, content: string): Generator<Action, void, string> {
  const dir = relative.includes('/') ? relative.slice(0, relative.lastIndexOf('/')) : '';
  if (dir) yield { kind: 'bash', command: `mkdir -p '${dir}'` };
  yield { kind: 'write', path: `${folder}/${relative}`, relative, content };
}

interface Facts {
  readonly epicTitle: string;
  readonly stepTitle: string;
  addedLine: { file: string; line: number } | null;
}

/**
 * A read tool's result as the file's text: without the wrapper some CLIs put around it (opencode's
 * `<content>`) and the line numbers they put before each line (`   1→`, `1: `, `00001| `, `1\t`).
 */
export function withoutLineNumbers(text: string): string {
  const wrapped = /<content>\n([\s\S]*?)(?:\n<\/content>|$)/.exec(text)?.[1] ?? text;
  const lines = wrapped.split('\n');
  const numbered = /^\s*\d+(?:\t|→|\| ?|: ?)/;
  const counted = lines.filter((l) => l.trim() !== '');
  if (counted.length < 2 || counted.filter((l) => numbered.test(l)).length < counted.length * 0.8) return text;
  return lines
    .filter((l) => numbered.test(l))
    .map((l) => l.replace(numbered, ''))
    .join('\n');
}

function sections(prompt: string): { heading: string; body: string }[] {
  return prompt
    .split(/^## /m)
    .slice(1)
    .map((chunk) => {
      const nl = chunk.indexOf('\n');
      return { heading: chunk.slice(0, nl < 0 ? undefined : nl).trim(), body: nl < 0 ? '' : chunk.slice(nl + 1) };
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

/** Lisa: the plan format the prompt teaches, titled for this epic, at the path its heading names. */
function planFrom(heading: string, prompt: string, facts: Facts): { path: string; text: string } | string {
  const path = /`([^`]+\.md)`/.exec(heading)?.[1];
  const example = /```markdown\n([\s\S]*?)\n```/.exec(prompt)?.[1];
  if (!path || !example) return `The instructions say to write a plan but not where or in which format ('${heading}').`;
  return { path, text: `${example.replace(/^# Plan: .*$/m, `# Plan: ${facts.epicTitle}`)}\n` };
}

/** Ralph: one file per task that names a path (the change a model would make), else a note for the step. */
function workFiles(context: string, fix: boolean): { path: string; content: string }[] {
  if (fix) return [{ path: `fixes/fix-${Date.now()}.md`, content: 'Fixed what the review reported.\n' }];
  const step = /^## Step (\S+): (.+?) \[[^\]]*\]$([\s\S]*?)(?=^## |(?![\s\S]))/m.exec(context);
  const anchor = step?.[1] ?? 'step';
  const tasks = [...(step?.[3] ?? '').matchAll(/^- \[[ x]\] task \d+: (.+)$/gm)].map((m) => m[1] ?? '');
  const files = new Map<string, string>();
  for (const task of tasks) {
    const named = /(?:^|\s)((?:[\w.-]+\/)*[\w-]+\.(?:ts|js|mjs|cjs|md|json|txt))\b/.exec(task)?.[1];
    if (named && !named.startsWith('/') && !named.includes('..'))
      files.set(named, `// ${task}\nexport const done = ${JSON.stringify(task)};\n`);
  }
  if (files.size === 0) files.set(`work/${anchor}.md`, `${step?.[2] ?? 'Work'}\n`);
  return [...files].map(([path, content]) => ({ path, content }));
}

/** The <…> parts a model fills in, with words no shell expands; anything else it cannot follow. */
function fill(line: string, facts: Facts): string | { refusal: string } {
  let refusal: string | null = null;
  const out = line.replace(/<([^<>]+)>(?::<([^<>]+)>)?/g, (whole, a: string, b: string | undefined) => {
    if (a === 'file' && b === 'line') {
      if (facts.addedLine) return `${facts.addedLine.file}:${facts.addedLine.line}`;
      refusal = `The command '${line}' needs a line of the diff, and the diff I read added none.`;
      return whole;
    }
    if (/^what you did/.test(a)) return `Build ${facts.stepTitle}`;
    if (/^what you fixed/.test(a)) return 'Fix the review findings';
    if (/^what you found/.test(a)) return `Researched ${facts.epicTitle}`;
    if (/^your finding/.test(a)) return 'The change does what the plan says';
    refusal = `I do not know what to put for '${whole}' in: ${line}`;
    return whole;
  });
  return refusal ? { refusal } : out;
}

/** The first line the diff adds to a file of the change itself (not Springfield's plan, handoff or summary). */
function firstAddedLine(diff: string): { file: string; line: number } | null {
  let file: string | null = null;
  let line = 0;
  for (const l of diff.split('\n')) {
    if (l.startsWith('+++ '))
      file = l.startsWith('+++ b/') && !/^(plans\/|TODO-|SUMMARY-)/.test(l.slice(6)) ? l.slice(6) : null;
    else if (l.startsWith('@@')) line = Number(/\+(\d+)/.exec(l)?.[1] ?? 0);
    else if (file && line > 0) {
      if (l.startsWith('+')) return { file, line };
      if (!l.startsWith('-')) line++;
    }
  }
  return null;
}
