/** The fleet governor's defaults (docs/scheduler.md, "The fleet"); the keys are src/shared/fleetSettings.ts's. */
import { availableParallelism } from 'node:os';
import type { AdmissionLimits, FleetSettings } from '../../shared/fleetSettings.ts';

/** `"maxParallelAgents": "auto"` never goes above this many agents at once. */
export const AUTO_CEILING = 20;

/** Defaults that keep a 2-core machine responsive: 1 GB left free, CPU and IO busy less than 80 % and 60 % of the time. */
export const DEFAULT_ADMISSION: AdmissionLimits = {
  minFreeMemoryMb: 1024,
  maxCpuPressure: 80,
  maxMemoryPressure: 20,
  maxIoPressure: 60,
  maxLoadPerCore: 2,
};

export const DEFAULT_MAX_WAITING_ON_PERSON = 3;

export function admissionOf(s: FleetSettings): AdmissionLimits {
  return { ...DEFAULT_ADMISSION, ...s.admission };
}

/** Verification and setup slots: half the cores (at least one) each unless configured. */
export function slotsOf(s: FleetSettings, cores = availableParallelism()): { verification: number; setup: number } {
  const half = Math.max(1, Math.floor(cores / 2));
  return { verification: s.slots?.verification ?? half, setup: s.slots?.setup ?? half };
}
