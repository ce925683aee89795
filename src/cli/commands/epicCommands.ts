import type { Command } from '../command.ts';
import { contextCommand } from './context.ts';
import { epicApproveMerge, epicCreate, epicDefer, epicFinish, epicList, epicResume, epicShow, epicStart } from './epic.ts';
import { planApprove, planDiscard, planPropose, planRequestChanges, planShow } from './plan.ts';
import { signalCommand, signalDecide, signalsCommand } from './signal.ts';

/** Epics, plan approval, signals and context (issue: planning layer). */
export const EPIC_COMMANDS: readonly Command[] = [
  epicCreate, epicList, epicShow, epicStart, epicFinish, epicApproveMerge, epicDefer, epicResume,
  planPropose, planApprove, planRequestChanges, planDiscard, planShow,
  signalCommand, signalDecide, signalsCommand, contextCommand,
];
