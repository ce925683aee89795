/**
 * A command as a person reads it: the program and its arguments with folders dropped from paths
 * ("node standInAgent.cjs --pace 2"), the full text kept for a tooltip. Pure, so the webviews use it too.
 */

/** The argument array behind a stored command: a JSON array (runs), or the shell-like text verification records. */
export function commandArgv(text: string): string[] {
  if (text.startsWith('[')) {
    try {
      const parsed: unknown = JSON.parse(text);
      if (Array.isArray(parsed) && parsed.every((a) => typeof a === 'string')) return parsed;
    } catch {
      // not JSON after all: read it as words
    }
  }
  const words: string[] = [];
  for (const m of text.matchAll(/"((?:[^"\\]|\\.)*)"|(\S+)/g)) {
    if (m[2] !== undefined) words.push(m[2]);
    else {
      try {
        words.push(JSON.parse(`"${m[1] ?? ''}"`) as string);
      } catch {
        words.push(m[1] ?? '');
      }
    }
  }
  return words;
}

/** "node standInAgent.cjs --pace 2": absolute paths by their last segment, quoted where a word has spaces. */
export function shortCommand(argv: readonly string[]): string {
  return argv
    .map((a) => (/^(?:[A-Za-z]:)?[\\/]/.test(a) ? (a.split(/[\\/]/).filter(Boolean).at(-1) ?? a) : a))
    .map((a) => (/^[\w@%+=:,./-]+$/.test(a) ? a : JSON.stringify(a)))
    .join(' ');
}

/** The whole command, shell-like (quoted where needed): what a tooltip or a title attribute shows. */
export function fullCommand(argv: readonly string[]): string {
  return argv.map((a) => (/^[\w@%+=:,./-]+$/.test(a) ? a : JSON.stringify(a))).join(' ');
}
