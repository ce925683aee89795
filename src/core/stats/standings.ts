/**
 * Each preset's record on one kind of step, as routing reads it (src/core/runs/routing.ts): the steps of
 * that kind it built, how many were reviewed and accepted first time, and its cost per merged step.
 */
import type { PresetStanding } from '../runs/routing.ts';
import { groupFigures } from './figures.ts';
import type { Ledger } from './ledger.ts';

export function presetStandings(ledger: Ledger, kind: string): Map<string, PresetStanding> {
  const out = new Map<string, PresetStanding>();
  for (const preset of new Set(ledger.steps.map((s) => s.preset))) {
    const steps = ledger.steps.filter((s) => s.preset === preset && s.kind === kind);
    if (steps.length === 0) continue;
    const f = groupFigures(preset, ledger, [], steps);
    out.set(preset, {
      built: steps.length,
      reviewed: f.first_pass.reviewed,
      accepted: f.first_pass.accepted,
      costPerStep: f.cost_per_merged_step,
    });
  }
  return out;
}
