/**
 * The fleet governor's configuration keys (docs/scheduler.md, "The fleet"): admission, slots for heavy
 * commands, the person's queue, notify and `"maxParallelAgents": "auto"`. They join the run config's
 * schema (src/core/runs/runConfig.ts); src/core/orchestrate/fleetConfig.ts resolves their defaults.
 */
import * as z from 'zod/mini';

/** What admission lets the machine come to before new heavy work waits (src/core/scheduler/admission.ts). */
export interface AdmissionLimits {
  readonly minFreeMemoryMb: number;
  /** Percent of the last 10 s some task waited (/proc/pressure "some avg10"). */
  readonly maxCpuPressure: number;
  readonly maxMemoryPressure: number;
  readonly maxIoPressure: number;
  /** Judged only where the kernel gives no pressure. */
  readonly maxLoadPerCore: number;
}

/**
 * Admission limits any machine meets: what a test or a demo about something else runs with, so its
 * verdict never hangs on how busy the machine is.
 */
export const ADMIT_ANY_MACHINE: AdmissionLimits = {
  minFreeMemoryMb: 0,
  maxCpuPressure: 100,
  maxMemoryPressure: 100,
  maxIoPressure: 100,
  maxLoadPerCore: 1000,
};

const Percent = z.number().check(z.gte(0), z.lte(100));
const Slots = z.int().check(z.gte(1), z.lte(64));

/** The keys this file adds to the config's schema. */
export const FLEET_SCHEMA = {
  maxParallelAgents: z.optional(z.union([z.int().check(z.gte(1), z.lte(64)), z.literal('auto')])),
  admission: z.optional(
    z.strictObject({
      minFreeMemoryMb: z.optional(z.int().check(z.gte(0), z.lte(10_000_000))),
      maxCpuPressure: z.optional(Percent),
      maxMemoryPressure: z.optional(Percent),
      maxIoPressure: z.optional(Percent),
      maxLoadPerCore: z.optional(z.number().check(z.positive(), z.lte(1000))),
    }),
  ),
  slots: z.optional(z.strictObject({ verification: z.optional(Slots), setup: z.optional(Slots) })),
  maxWaitingOnPerson: z.optional(z.int().check(z.gte(1), z.lte(1000))),
  notify: z.optional(
    z.strictObject({
      command: z
        .array(z.string().check(z.minLength(1, 'must be a non-empty string')))
        .check(z.minLength(1, 'a command needs at least the program')),
    }),
  ),
};

/** The same keys as the run config holds them: as written, so a config read back validates again. */
export interface FleetSettings {
  readonly admission?: Readonly<Partial<AdmissionLimits>>;
  readonly slots?: { readonly verification?: number; readonly setup?: number };
  readonly maxWaitingOnPerson?: number;
  readonly notify?: { readonly command: readonly string[] };
}

type Parsed = { [K in keyof typeof FLEET_SCHEMA]?: z.infer<(typeof FLEET_SCHEMA)[K]> };

/** The fleet keys of a parsed config, only those given. */
export function fleetSettingsOf(c: Parsed): FleetSettings {
  return {
    ...(c.admission ? { admission: c.admission } : {}),
    ...(c.slots ? { slots: c.slots } : {}),
    ...(c.maxWaitingOnPerson !== undefined ? { maxWaitingOnPerson: c.maxWaitingOnPerson } : {}),
    ...(c.notify ? { notify: c.notify } : {}),
  };
}
