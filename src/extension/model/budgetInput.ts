/**
 * Raise budget…'s input box (docs/budgets.md): a suggested new limit above what the epic has spent,
 * and a check that refuses a limit it has already reached. No vscode here.
 */
type BudgetKind = 'usd' | 'tokens' | 'minutes';

/** Half as much again as the larger of the spend and the old limit, rounded up to a whole unit. */
export function suggestedBudget(spent: number, limit: number | null): number {
  return Math.max(1, Math.ceil(Math.max(spent, limit ?? 0) * 1.5));
}

/** Why `text` is not a new limit for an epic that has spent `spent`, or null when it is. */
export function budgetInputError(kind: BudgetKind, text: string, spent: number, spentText: string): string | null {
  const v = text.trim();
  if (!/^\d+(\.\d+)?$/.test(v) || Number(v) <= 0 || (kind === 'tokens' && !Number.isSafeInteger(Number(v))))
    return `a positive ${kind === 'tokens' ? 'whole ' : ''}number`;
  if (Number(v) <= spent) return `more than it has already spent (${spentText}), or it pauses again at once`;
  return null;
}
