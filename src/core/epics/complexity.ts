/**
 * Complexity (docs/state-machine.md, "Budgets and iterations"): detected from an epic's title and brief by keyword,
 * overridable; it sets the plan/build iteration budgets and whether review is needed.
 *
 * Matching rule: text is lower-cased and each keyword must stand as a whole word — letters and
 * digits on either side break the match, while spaces, punctuation, `-` and `_` separate words —
 * with only the inflections listed in its pattern (typos, renamed, migrations, payments…).
 * `auth` matches alone or as auth/authn/authz/authentication/authorization/authorisation (and
 * their verbs, and oauth), so "author" and "authority" do not count. `remove unused` is a phrase.
 * The highest level with a match wins: critical > simple > trivial; no match means standard.
 */
import { UsageError } from '../errors.ts';

export type Complexity = 'trivial' | 'simple' | 'standard' | 'critical';

export const COMPLEXITIES: readonly Complexity[] = ['trivial', 'simple', 'standard', 'critical'];

export interface ComplexityPolicy {
  readonly planIterations: number;
  readonly buildIterations: number;
  /** skip_when_verified: Bart is skipped when verification passes; required: Bart must review. */
  readonly review: 'skip_when_verified' | 'auto' | 'required';
  readonly personApprovalBeforeMerge: boolean;
}

export const COMPLEXITY_POLICY: Readonly<Record<Complexity, ComplexityPolicy>> = {
  trivial: { planIterations: 2, buildIterations: 5, review: 'skip_when_verified', personApprovalBeforeMerge: false },
  simple: { planIterations: 3, buildIterations: 10, review: 'skip_when_verified', personApprovalBeforeMerge: false },
  standard: { planIterations: 5, buildIterations: 20, review: 'auto', personApprovalBeforeMerge: false },
  critical: { planIterations: 8, buildIterations: 40, review: 'required', personApprovalBeforeMerge: true },
};

interface KeywordRule {
  readonly level: Exclude<Complexity, 'standard'>;
  readonly keyword: string;
  /** Regex source for the word itself; word boundaries are added around it. */
  readonly pattern: string;
}

const KEYWORDS: readonly KeywordRule[] = [
  { level: 'trivial', keyword: 'typo', pattern: 'typos?' },
  { level: 'trivial', keyword: 'comment', pattern: 'comment(?:s|ed|ing)?' },
  { level: 'trivial', keyword: 'rename', pattern: 'renam(?:e|es|ed|ing)' },
  { level: 'trivial', keyword: 'spelling', pattern: '(?:mis)?spell(?:ing|ings|ed|t)?' },
  { level: 'trivial', keyword: 'whitespace', pattern: 'white[- ]?spaces?' },
  { level: 'simple', keyword: 'button', pattern: 'buttons?' },
  { level: 'simple', keyword: 'toggle', pattern: 'toggl(?:e|es|ed|ing)' },
  { level: 'simple', keyword: 'flag', pattern: 'flag(?:s|ged|ging)?' },
  { level: 'simple', keyword: 'remove unused', pattern: 'remov(?:e|es|ed|ing|al of)\\s+(?:the\\s+|all\\s+)?unused' },
  {
    level: 'critical',
    keyword: 'auth',
    pattern: 'o?auth(?:n|z|s|entication|enticate[sd]?|enticating|ori[sz]ation|ori[sz]e[sd]?|ori[sz]ing)?',
  },
  { level: 'critical', keyword: 'security', pattern: 'security' },
  { level: 'critical', keyword: 'payment', pattern: 'payments?' },
  { level: 'critical', keyword: 'migration', pattern: 'migrat(?:e|es|ed|ing|ion|ions)' },
  { level: 'critical', keyword: 'credential', pattern: 'credentials?' },
];

const MATCHERS = KEYWORDS.map((rule) => ({ ...rule, re: new RegExp(`(?<![a-z0-9])${rule.pattern}(?![a-z0-9])`) }));

const RANK: Readonly<Record<Complexity, number>> = { standard: 0, trivial: 1, simple: 2, critical: 3 };

/** The keywords found in the text, each with its level (for explaining a detection). */
export function complexityKeywords(text: string): { level: Complexity; keyword: string }[] {
  const lower = text.toLowerCase();
  return MATCHERS.filter((m) => m.re.test(lower)).map((m) => ({ level: m.level, keyword: m.keyword }));
}

/** Detects complexity from an epic's title and brief; the highest matched level wins, else standard. */
export function detectComplexity(title: string, brief = ''): Complexity {
  let best: Complexity = 'standard';
  for (const { level } of complexityKeywords(`${title}\n${brief}`)) {
    if (RANK[level] > RANK[best]) best = level;
  }
  return best;
}

/** True when `s` names a complexity level (exactly, lower-case). */
export function isComplexity(s: string): s is Complexity {
  return (COMPLEXITIES as readonly string[]).includes(s);
}

/** Parses a `--complexity` value (case-insensitive); refuses anything else with `invalid_complexity`. */
export function parseComplexity(text: string): Complexity {
  const value = text.trim().toLowerCase();
  if (isComplexity(value)) return value;
  throw new UsageError(
    'invalid_complexity',
    `invalid complexity "${text}"; expected one of: ${COMPLEXITIES.join(', ')}`,
  );
}

/** The build-iteration budget of an epic: its explicit override, else its complexity's. */
export function buildBudget(epic: { readonly max_iterations: number | null; readonly complexity: Complexity }): number {
  return epic.max_iterations ?? COMPLEXITY_POLICY[epic.complexity].buildIterations;
}
