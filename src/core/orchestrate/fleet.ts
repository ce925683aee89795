/**
 * The orchestrator's side of the fleet governor (docs/scheduler.md, "The fleet"): each pass it reads
 * the machine for admission and counts the heavy commands it has under way; it keeps the current value
 * of `"maxParallelAgents": "auto"` from each run's end. Slots are counted in this process: one
 * scheduler runs a repository's heavy commands, and a scheduler that dies takes its count with it.
 */
import type { RunConfig } from '../runs/runConfig.ts';
import { admissionHold, type MachineReading } from '../scheduler/admission.ts';
import { type AutoParallel, autoAfterLook, autoAfterRun, autoStart, autoText } from '../scheduler/autoParallel.ts';
import type { SchedulerSnapshot } from '../scheduler/types.ts';
import { admissionOf, AUTO_CEILING } from './fleetConfig.ts';
import { readMachine } from './machine.ts';

export type HeavyKind = 'verify' | 'setup' | 'merge';

/** How many agents may run at once now, for display. */
export interface Parallel {
  readonly auto: boolean;
  readonly current: number;
  readonly ceiling: number;
  readonly text: string;
}

export class Fleet {
  private readonly config: RunConfig;
  private readonly log: (line: string) => void;
  private readonly read: () => MachineReading;
  private auto: AutoParallel | null;
  private hold: string | null = null;

  constructor(config: RunConfig, log: (line: string) => void, read: () => MachineReading = () => readMachine()) {
    this.config = config;
    this.log = log;
    this.read = read;
    this.auto = config.maxParallelAgents === 'auto' ? autoStart(AUTO_CEILING) : null;
    if (this.auto) log(autoText(this.auto));
  }

  /** The pass's view of the machine and of the heavy work under way (`kinds`: this scheduler's work by epic). */
  look(kinds: Iterable<HeavyKind>): NonNullable<SchedulerSnapshot['fleet']> {
    const hold = admissionHold(this.read(), admissionOf(this.config));
    if (hold !== null && this.hold === null) this.log(`admission: new agents and heavy commands wait — ${hold}`);
    if (hold === null && this.hold !== null) this.log('admission: the machine has room again');
    this.hold = hold;
    if (this.auto) this.auto = autoAfterLook(this.auto, hold !== null);
    const heavy = { verification: 0, setup: 0 };
    for (const k of kinds) {
      if (k === 'verify') heavy.verification += 1;
      if (k === 'setup') heavy.setup += 1;
    }
    return { admission: hold, heavy };
  }

  /** A run this scheduler started ended with `outcome` (its status): auto grows or halves. */
  runEnded(outcome: string): void {
    if (!this.auto) return;
    const before = this.auto.current;
    const limited = this.auto.beforeLimit !== null;
    this.auto = autoAfterRun(this.auto, outcome, this.hold !== null);
    if (this.auto.current !== before)
      this.log(
        `${autoText(this.auto)} — ${this.auto.current > before ? (limited ? 'the usage limit is over' : 'runs succeed with room to spare') : outcome === 'limited' ? 'a run met a usage limit' : 'the machine is under pressure'}`,
      );
  }

  get parallel(): Parallel {
    if (this.auto)
      return { auto: true, current: this.auto.current, ceiling: this.auto.ceiling, text: autoText(this.auto) };
    const n = this.config.maxParallelAgents as number;
    return { auto: false, current: n, ceiling: n, text: `${n} agent${n === 1 ? '' : 's'} at once` };
  }
}
