import { at, parseAll } from './usage.ts';

/**
 * Where an agent CLI's output says why it failed, as data (docs/scheduler-faults.md, "The
 * headline"): a JSON event (one per line) with these fields, whose text is at the first of `paths`
 * that holds one; `document`: one JSON object for the whole stream (Gemini's error on stderr); or a
 * line matching `pattern` (its first group).
 */
export type ErrorSpec =
  | {
      readonly match: Readonly<Record<string, string | boolean>>;
      readonly paths: readonly string[];
      readonly document?: boolean;
    }
  | { readonly pattern: RegExp };

const MAX = 300;

/** The agent's own error in its output (the last one it reported), or null when it reported none. */
export function agentError(specs: readonly ErrorSpec[], output: string): string | null {
  const lines = output.split('\n');
  const events = parseAll(lines);
  for (const spec of specs) {
    if ('pattern' in spec) {
      const hit = lines
        .map((l) => spec.pattern.exec(l)?.[1])
        .filter((t): t is string => !!t?.trim())
        .at(-1);
      if (hit) return clip(hit);
      continue;
    }
    const docs = spec.document ? documents(output) : events;
    for (const doc of [...docs].reverse()) {
      if (!Object.entries(spec.match).every(([k, v]) => at(doc, k) === v)) continue;
      const text = spec.paths.map((p) => at(doc, p)).find((v): v is string => typeof v === 'string' && v.trim() !== '');
      if (text) return clip(text);
    }
  }
  return null;
}

/** The last line of the output that the agent printed (not one of Springfield's own `[springfield] …` notes). */
export function lastAgentLine(tail: string): string | null {
  const line = tail
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('[springfield]'))
    .at(-1);
  return line ? clip(line) : null;
}

/** JSON objects that span lines (pretty-printed): each `{` at a line's start through the end of the stream. */
function documents(output: string): Record<string, unknown>[] {
  const starts = [...output.matchAll(/^\{/gm)].map((m) => m.index);
  return parseAll(starts.map((i) => output.slice(i, output.lastIndexOf('}') + 1).replace(/\n/g, ' ')));
}

function clip(text: string): string {
  // A CLI that passes the model server's error body on as its message (Gemini): the body's own message.
  const inner = text.trim().startsWith('{')
    ? parseAll([text])
        .map((d) => at(d, 'error.message'))
        .find((m): m is string => typeof m === 'string')
    : undefined;
  if (inner) return clip(inner);
  const one = text
    .trim()
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)
    .join(' ');
  return one.length > MAX ? `${one.slice(0, MAX)}…` : one;
}
