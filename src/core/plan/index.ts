export { parsePlan, readPlanFile } from './parse.ts';
export { describeDrift, planHash, planStructure } from './hash.ts';
export type { PlanStructure, StepStructure } from './hash.ts';
export { ITEM_KINDS } from './types.ts';
export type { ItemKind, Plan, PlanItem, PlanStep } from './types.ts';
