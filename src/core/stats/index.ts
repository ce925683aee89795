export { buildLedger, type Ledger, type LedgerRun, type LedgerStep } from './ledger.ts';
export { groupFigures, statsReport, STATS_BY, type GroupFigures, type StatsBy, type StatsReport } from './figures.ts';
export { runAgent } from './runPreset.ts';
export { STEP_AREAS, stepArea, stepSize, type StepArea, type StepSize } from './stepKind.ts';
export { statsBy, windowStart } from './window.ts';
export { presetStandings } from './standings.ts';
export { revertedEpics } from './reverts.ts';
