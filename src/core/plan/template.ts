import { checkbox, dependsOn, fence, heading, splitLines } from './scan.ts';

/** What a new plan is written from: the epic it is for. */
export interface PlanTemplateInput {
  readonly id: string;
  readonly title: string;
  readonly brief: string;
}

/**
 * A first plan for an epic in the plan grammar (docs/plan-grammar.md): the brief as its intent, Approach
 * and Constraints to fill in, and three steps to rewrite, with the brief's acceptance criteria as
 * tests. It parses as it is, so a person can propose it at once and refine it later.
 */
export function planTemplate(epic: PlanTemplateInput): string {
  const title = oneLine(epic.title) || epic.id;
  const criteria = acceptanceCriteria(epic.brief);
  const tests = criteria.length ? criteria : ['A test for each acceptance criterion'];
  return [
    `# Plan: ${title}`,
    '',
    `Epic ${epic.id}. Written from a template: rewrite the steps below as the real work, then propose`,
    'the plan (right-click the epic → Propose plan…). Each "## Step N: Title" is one claimable unit;',
    '"### Step N.M" headings are substeps that go with it.',
    '',
    '## Intent',
    '',
    epic.brief.trim() ? proseOf(epic.brief) : 'What this epic delivers and how you will know it is done.',
    '',
    '## Approach',
    '',
    'How the work will be done, in a few sentences. Builders get this section in their handoff.',
    '',
    '## Constraints',
    '',
    'What must not change: public interfaces, dependencies, performance budgets.',
    '',
    '## Step 1: Read the code and write the first failing test {#step-1}',
    '**Depends on:** none',
    '**Tasks:**',
    '- [ ] Read the code this change touches and note what must keep working',
    '**Tests:**',
    `- [ ] ${tests[0]}`,
    '',
    '## Step 2: Make the change {#step-2}',
    '**Depends on:** #step-1',
    '**Tasks:**',
    '- [ ] Implement the change',
    '**Tests:**',
    ...(tests.length > 1 ? tests.slice(1) : ['The tests of step 1 pass']).map((t) => `- [ ] ${t}`),
    '',
    '## Step 3: Document and verify {#step-3}',
    '**Depends on:** #step-2',
    '**Tasks:**',
    '- [ ] Update the README and docs',
    '**Checkpoints:**',
    '- [ ] The whole test suite passes',
    '',
  ].join('\n');
}

/** `plans/<words-of-the-title>.md`, or `plans/<epic-id>.md` when the title has no letters or digits. */
export function planFileName(epic: PlanTemplateInput): string {
  const slug = oneLine(epic.title)
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 48)
    .replace(/-+$/, '');
  return `plans/${slug || epic.id}.md`;
}

/** The brief's "Acceptance: a; b" (or a list under "Acceptance criteria:"), one item each. */
export function acceptanceCriteria(brief: string): string[] {
  const match = /acceptance(?:\s+criteria)?\s*:\s*([\s\S]*)$/i.exec(brief);
  if (!match?.[1]) return [];
  return match[1]
    .split(/\n\s*[-*+]\s+|;|\n{2,}|\.\s+(?=[A-Z])/)
    .map((x) => oneLine(x.replace(/^\s*[-*+]\s+/, '')).replace(/\.$/, ''))
    .filter(Boolean)
    .slice(0, 8);
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/**
 * The brief as prose inside a plan section: lines the plan grammar would read as a heading, a code
 * fence, a checklist item or a dependency are escaped, so no brief can add steps or break the plan.
 */
function proseOf(brief: string): string {
  return splitLines(brief.trim())
    .map((line) => {
      if (heading(line)) return line.replace('#', '\\#');
      if (fence(line)) return line.replace(/[`~]/, (c) => `\\${c}`);
      if (checkbox(line)) return line.replace('[', '\\[');
      if (dependsOn(line.trim()) !== null) return line.replace('**', '\\*\\*');
      return line;
    })
    .join('\n');
}
