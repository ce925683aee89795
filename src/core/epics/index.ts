/** The pure epic domain: state machine, complexity, ids. */
export * from './transitions.ts';
export * from './budget.ts';
export * from './completion.ts';
export * from './complexity.ts';
export * from './ids.ts';
