/**
 * The plan parser's line tests, written as string scans. Each regular expression costs a CLI call
 * tens of microseconds to compile the first time it runs, and a plan is parsed on every claim, so
 * the simple patterns are spelled out here. Each function documents the expression it stands for, and
 * a test holds it to that expression on generated lines (test/unit/planScan.test.ts).
 *
 * `\s` in those expressions is exactly what String.prototype.trim removes, so a character is
 * whitespace when `ch.trim() === ''`; `.` matches anything but a line terminator.
 */

const LINE_TERMINATORS = ['\n', '\r', '\u2028', '\u2029'];

function isSpace(ch: string | undefined): boolean {
  return ch !== undefined && ch !== '' && ch.trim() === '';
}

/** Whether `/^.*$/` would match `text` (no line terminator in it). */
function isOneLine(text: string): boolean {
  return !LINE_TERMINATORS.some((t) => text.includes(t));
}

/** The index of the first non-whitespace character at or after `from` (`\s*`). */
function skipSpace(text: string, from: number): number {
  let i = from;
  while (isSpace(text[i])) i++;
  return i;
}

/** How many times `ch` repeats from `from`. */
function runOf(text: string, from: number, ch: string): number {
  let n = 0;
  while (text[from + n] === ch) n++;
  return n;
}

/** Whether `text` has `word` (lowercase ASCII) at `at`, ASCII letters in either case (as `/i` without `u`). */
function hasWordAt(text: string, at: number, word: string): boolean {
  if (text.length < at + word.length) return false;
  for (let i = 0; i < word.length; i++) {
    const c = text.charCodeAt(at + i);
    const lower = c >= 65 && c <= 90 ? c + 32 : c;
    if (lower !== word.charCodeAt(i)) return false;
  }
  return true;
}

/** The lines of `text`, split at `\r\n`, `\n` or `\r` (`text.split(/\r\n|\n|\r/)`). */
export function splitLines(text: string): string[] {
  return text.replaceAll('\r\n', '\n').replaceAll('\r', '\n').split('\n');
}

/** `/^\s*(`{3,}|~{3,})(.*)$/`: a code fence's marker and what follows it. */
export function fence(line: string): { marker: string; info: string } | null {
  const at = skipSpace(line, 0);
  const ch = line[at];
  if (ch !== '`' && ch !== '~') return null;
  const n = runOf(line, at, ch);
  const info = line.slice(at + n);
  return n >= 3 && isOneLine(info) ? { marker: ch.repeat(n), info } : null;
}

/** `/^ {0,3}(#{1,6})(?:[ \t]+(.*))?$/`: an ATX heading's level and text (undefined for a bare `##`). */
export function heading(line: string): { level: number; text: string | undefined } | null {
  const indent = runOf(line, 0, ' ');
  const level = runOf(line, indent, '#');
  if (indent > 3 || level < 1 || level > 6) return null;
  let at = indent + level;
  if (at === line.length) return { level, text: undefined };
  if (line[at] !== ' ' && line[at] !== '\t') return null;
  while (line[at] === ' ' || line[at] === '\t') at++;
  const text = line.slice(at);
  return isOneLine(text) ? { level, text } : null;
}

/** `text.replace(/(?:^|\s+)#+\s*$/, '')`: a heading without its closing hashes (spaces before them may stay). */
export function withoutClosingHashes(text: string): string {
  let end = text.length;
  while (isSpace(text[end - 1])) end--;
  let hashes = end;
  while (text[hashes - 1] === '#') hashes--;
  if (hashes === end) return text;
  if (hashes === 0) return '';
  if (!isSpace(text[hashes - 1])) return text;
  let start = hashes - 1;
  while (isSpace(text[start - 1])) start--;
  return text.slice(0, start);
}

/** `text.replace(/^plan\s*:/i, '')`: a title without a leading "Plan:". */
export function withoutPlanPrefix(text: string): string {
  if (!hasWordAt(text, 0, 'plan')) return text;
  const colon = skipSpace(text, 4);
  return text[colon] === ':' ? text.slice(colon + 1) : text;
}

/** `/\{#([^}]*)\}\s*$/`: an explicit anchor at the end of a heading, and where it starts. */
export function anchorSuffix(text: string): { anchor: string; index: number } | null {
  let close = text.length;
  while (isSpace(text[close - 1])) close--;
  close--;
  if (text[close] !== '}') return null;
  const open = text.indexOf('{#', text.lastIndexOf('}', close - 1) + 1);
  if (open === -1 || open + 2 > close) return null;
  return { anchor: text.slice(open + 2, close), index: open };
}

/** `/^[a-z0-9][a-z0-9-]*$/`: a well-formed anchor. */
export function isAnchor(text: string): boolean {
  if (text === '' || text[0] === '-') return false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (!(c >= 97 && c <= 122) && !(c >= 48 && c <= 57) && c !== 45) return false;
  }
  return true;
}

/** `/^\*\*depends on:?\*\*:?(.*)$/i` on a trimmed line: what follows the label. */
export function dependsOn(trimmed: string): string | null {
  if (!trimmed.startsWith('**') || !hasWordAt(trimmed, 2, 'depends on')) return null;
  let at = 12;
  if (trimmed[at] === ':') at++;
  if (!trimmed.startsWith('**', at)) return null;
  at += 2;
  if (trimmed[at] === ':') at++;
  const rest = trimmed.slice(at);
  return isOneLine(rest) ? rest : null;
}

/** `/^\*\*files:?\*\*:?(.*)$/i` on a trimmed line: what follows the label (docs/plan-grammar.md, "Files"). */
export function filesLine(trimmed: string): string | null {
  if (!trimmed.startsWith('**') || !hasWordAt(trimmed, 2, 'files')) return null;
  let at = 7;
  if (trimmed[at] === ':') at++;
  if (!trimmed.startsWith('**', at)) return null;
  at += 2;
  if (trimmed[at] === ':') at++;
  const rest = trimmed.slice(at);
  return isOneLine(rest) ? rest : null;
}

/** `/^\*\*(task|test|checkpoint)s?:?\*\*:?$/i` on a trimmed line: the kind it labels, lowercase. */
export function kindLabel(trimmed: string): 'task' | 'test' | 'checkpoint' | null {
  if (!trimmed.startsWith('**')) return null;
  const kind = (['task', 'test', 'checkpoint'] as const).find((k) => hasWordAt(trimmed, 2, k));
  if (!kind) return null;
  let at = 2 + kind.length;
  if (trimmed[at] === 's' || trimmed[at] === 'S') at++;
  if (trimmed[at] === ':') at++;
  if (!trimmed.startsWith('**', at)) return null;
  at += 2;
  if (trimmed[at] === ':') at++;
  return at === trimmed.length ? kind : null;
}

/** `/^\s*[-*+]\s+\[([ xX])\](.*)$/`: a checklist item's box and text. */
export function checkbox(line: string): { box: string; text: string } | null {
  const bullet = skipSpace(line, 0);
  if (line[bullet] !== '-' && line[bullet] !== '*' && line[bullet] !== '+') return null;
  const open = skipSpace(line, bullet + 1);
  if (open === bullet + 1 || line[open] !== '[' || line[open + 2] !== ']') return null;
  const box = line[open + 1] as string;
  if (box !== ' ' && box !== 'x' && box !== 'X') return null;
  const text = line.slice(open + 3);
  return isOneLine(text) ? { box, text } : null;
}

/** `/^(?: {2,}|\t)\s*\S/`: an indented line with something on it (continues the item above). */
export function isContinuation(line: string): boolean {
  return (line.startsWith('  ') || line.startsWith('\t')) && line.trim() !== '';
}

/** `text.split(/[\s,]+/)` without the empty ends: the anchors a dependency line lists. */
export function listedAnchors(text: string): string[] {
  const out: string[] = [];
  let token = '';
  for (const ch of text) {
    if (ch === ',' || isSpace(ch)) {
      if (token !== '') out.push(token);
      token = '';
    } else token += ch;
  }
  if (token !== '') out.push(token);
  return out;
}
