/**
 * A step's kind (docs/stats.md, "Terms"): its area — docs, tests or code — from the files
 * its plan declares (extensions and folders), else from its title; and its size in checklist items.
 */
export type StepArea = 'docs' | 'tests' | 'code';
export type StepSize = 'small' | 'medium' | 'large';

export const STEP_AREAS: readonly StepArea[] = ['docs', 'tests', 'code'];

const DOC_EXTENSIONS = /\.(md|mdx|markdown|rst|adoc|txt)$/i;
const DOC_FOLDER = /(^|\/)(docs?|documentation)\//i;
const TEST_FILE = /(^|\/)(tests?|__tests__|spec|specs)\/|[._-](test|spec)\.[a-z0-9]+$/i;

/** The area of one path or glob. */
export function areaOfPath(path: string): StepArea {
  if (TEST_FILE.test(path)) return 'tests';
  if (DOC_FOLDER.test(path) || DOC_EXTENSIONS.test(path)) return 'docs';
  return 'code';
}

/** docs when every file is documentation, tests when every file is a test, else code; the title decides when no file is declared. */
export function stepArea(files: readonly string[], title: string): StepArea {
  if (files.length > 0) {
    const areas = new Set(files.map(areaOfPath));
    return areas.size === 1 ? [...areas][0]! : 'code';
  }
  if (/\b(docs?|documentation|readme|changelog|guide)\b/i.test(title)) return 'docs';
  if (/\btests?\b/i.test(title)) return 'tests';
  return 'code';
}

/** small: up to 3 items; medium: up to 8; large: more. */
export function stepSize(items: number): StepSize {
  return items <= 3 ? 'small' : items <= 8 ? 'medium' : 'large';
}

/** The globs a step row's `files` column holds (a JSON array, or null for none). */
export function filesOf(column: string | null): string[] {
  if (!column) return [];
  try {
    const value: unknown = JSON.parse(column);
    return Array.isArray(value) ? value.filter((f): f is string => typeof f === 'string') : [];
  } catch {
    return [];
  }
}
