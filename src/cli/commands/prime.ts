import { resolve } from 'node:path';
import { primeText, UsageError, writePrimeSection } from '../../core/index.ts';
import { str } from '../args.ts';
import type { Command } from '../command.ts';
import { output } from '../output.ts';

export const primeCommand: Command = {
  name: 'prime',
  summary: 'print the protocol for an agent Springfield did not start, or write it into AGENTS.md / CLAUDE.md',
  positionals: [],
  options: [
    {
      name: 'write',
      type: 'string',
      placeholder: 'FILE',
      description: 'add or update a marked section in this markdown file (e.g. AGENTS.md or CLAUDE.md)',
    },
  ],
  details:
    'With --write, text outside the <!-- springfield:begin --> / <!-- springfield:end --> markers is kept; running it again changes nothing.\nA missing file is created; a symbolic link is refused.',
  async run(ctx) {
    const target = str(ctx.args, 'write');
    if (target === undefined) return output({ text: primeText() }, primeText().trimEnd());
    if (!/\.(md|markdown)$/i.test(target))
      throw new UsageError(
        'bad_option',
        `--write needs a markdown file such as AGENTS.md or CLAUDE.md, got '${target}'`,
      );
    const r = writePrimeSection(resolve(ctx.cwd, target));
    const what = {
      created: 'Created',
      added: 'Added the Springfield section to',
      updated: 'Updated the Springfield section of',
      unchanged: 'Already current:',
    }[r.action];
    return output(r, `${what} ${r.path}`);
  },
};
