import { STEP_MODULES, type CommandModule } from './modules.ts';

/**
 * Every command, by the module that defines it: the step commands, then the rest, each loaded only
 * when named (so `epic` does not compile the scheduler).
 */
export const COMMAND_MODULES: readonly CommandModule[] = [
  ...STEP_MODULES,
  {
    names: [
      'epic create',
      'epic list',
      'epic show',
      'epic start',
      'epic finish',
      'epic approve-merge',
      'epic defer',
      'epic resume',
      'epic retry',
      'epic budget',
    ],
    load: async () => {
      const m = await import('./epic.ts');
      return [
        m.epicCreate,
        m.epicList,
        m.epicShow,
        m.epicStart,
        m.epicFinish,
        m.epicApproveMerge,
        m.epicDefer,
        m.epicResume,
        m.epicRetry,
        m.epicBudget,
      ];
    },
  },
  {
    names: ['plan propose', 'plan approve', 'plan request-changes', 'plan discard', 'plan note', 'plan show'],
    load: async () => {
      const m = await import('./plan.ts');
      return [m.planPropose, m.planApprove, m.planRequestChanges, m.planDiscard, m.planNote, m.planShow];
    },
  },
  {
    names: ['signal', 'signal decide', 'signals'],
    load: async () => {
      const m = await import('./signal.ts');
      return [m.signalCommand, m.signalDecide, m.signalsCommand];
    },
  },
  { names: ['review'], load: async () => [(await import('./review.ts')).reviewCommand] },
  { names: ['context'], load: async () => [(await import('./context.ts')).contextCommand] },
  { names: ['commit'], load: async () => [(await import('./commit.ts')).commitCommand] },
  { names: ['reopen'], load: async () => [(await import('./reopen.ts')).reopenCommand] },
  { names: ['reconcile'], load: async () => [(await import('./reconcile.ts')).reconcileCommand] },
  { names: ['doctor'], load: async () => [(await import('./doctor.ts')).doctorCommand] },
  { names: ['prune'], load: async () => [(await import('./prune.ts')).pruneCommand] },
  { names: ['migrate'], load: async () => [(await import('./migrate.ts')).migrateCommand] },
  { names: ['run'], load: async () => [(await import('./run.ts')).runCommand] },
  { names: ['debt'], load: async () => [(await import('./debt.ts')).debtCommand] },
  { names: ['runs'], load: async () => [(await import('./runs.ts')).runsCommand] },
  { names: ['stats'], load: async () => [(await import('./stats.ts')).statsCommand] },
  { names: ['orchestrate'], load: async () => [(await import('./orchestrate.ts')).orchestrateCommand] },
  {
    names: ['agents', 'agents use'],
    load: async () => {
      const m = await import('./agents.ts');
      return [m.agentsCommand, m.agentsUseCommand];
    },
  },
  { names: ['agents route'], load: async () => [(await import('./agentsRoute.ts')).agentsRouteCommand] },
  {
    names: ['worktrees', 'worktrees prune'],
    load: async () => {
      const m = await import('./worktrees.ts');
      return [m.worktreesCommand, m.worktreesPrune];
    },
  },
  { names: ['app'], load: async () => [(await import('./app.ts')).appCommand] },
  { names: ['prime'], load: async () => [(await import('./prime.ts')).primeCommand] },
  { names: ['mcp'], load: async () => [(await import('./mcp.ts')).mcpCommand] },
  { names: ['allow'], load: async () => [(await import('./allow.ts')).allowCommand] },
];
