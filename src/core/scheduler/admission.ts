/**
 * Admission (docs/scheduler.md, "The fleet"): a reading of the machine in, the reason new work waits
 * out (null: admit). Pure; the reading itself is src/core/orchestrate/machine.ts.
 */
import type { AdmissionLimits } from '../../shared/fleetSettings.ts';

/** What the machine has to spare now. */
export interface MachineReading {
  readonly cores: number;
  /** Memory available for new work (MemAvailable on Linux, free memory elsewhere), in MB. */
  readonly freeMemoryMb: number;
  /** The share of the last 10 s some task waited for the CPU, memory or IO (/proc/pressure, "some avg10"); null where the kernel offers none. */
  readonly cpuPressure: number | null;
  readonly memoryPressure: number | null;
  readonly ioPressure: number | null;
  /** The 1-minute load average per core: what is judged where no pressure is known. */
  readonly loadPerCore: number;
}

export type { AdmissionLimits } from '../../shared/fleetSettings.ts';

/** Why nothing heavy may start now ("0.9 GB free, needs 2 GB"), or null when the machine has room. */
export function admissionHold(m: MachineReading, limits: AdmissionLimits): string | null {
  if (m.freeMemoryMb < limits.minFreeMemoryMb)
    return `${size(m.freeMemoryMb)} free, needs ${size(limits.minFreeMemoryMb)}`;
  const pressure: [string, number | null, number][] = [
    ['CPU', m.cpuPressure, limits.maxCpuPressure],
    ['memory', m.memoryPressure, limits.maxMemoryPressure],
    ['IO', m.ioPressure, limits.maxIoPressure],
  ];
  for (const [what, value, max] of pressure)
    if (value !== null && value > max) return `${what} pressure ${round(value)} % (at most ${round(max)} %)`;
  if (m.cpuPressure === null && m.loadPerCore > limits.maxLoadPerCore)
    return `load ${round(m.loadPerCore)} per core (at most ${round(limits.maxLoadPerCore)})`;
  return null;
}

/** MemAvailable from /proc/meminfo, in MB; null when the text has none. */
export function parseMeminfo(text: string): number | null {
  const m = /^MemAvailable:\s+(\d+)\s*kB/m.exec(text);
  return m ? Math.floor(Number(m[1]) / 1024) : null;
}

/** "some avg10" from a /proc/pressure file, in percent; null when the text has none. */
export function parsePressure(text: string): number | null {
  const m = /^some\s.*\bavg10=(\d+(?:\.\d+)?)/m.exec(text);
  return m ? Number(m[1]) : null;
}

function size(mb: number): string {
  return mb >= 100 ? `${round(mb / 1024)} GB` : `${Math.round(mb)} MB`;
}

function round(n: number): string {
  return String(Math.round(n * 10) / 10);
}
