/**
 * Reads the machine for admission (src/core/scheduler/admission.ts): /proc/meminfo and
 * /proc/pressure on Linux, os.freemem() and the load average elsewhere. SPRINGFIELD_PROC_ROOT names
 * another folder laid out like /proc (the fleet test shapes the machine it reports with it).
 */
import { readFileSync } from 'node:fs';
import { availableParallelism, freemem, loadavg } from 'node:os';
import { join } from 'node:path';
import { type MachineReading, parseMeminfo, parsePressure } from '../scheduler/admission.ts';

export function readMachine(procRoot = process.env.SPRINGFIELD_PROC_ROOT || '/proc'): MachineReading {
  const cores = availableParallelism();
  const read = (path: string): string | null => {
    try {
      return readFileSync(join(procRoot, path), 'utf8');
    } catch {
      return null;
    }
  };
  const meminfo = read('meminfo');
  const pressure = (what: string): number | null => {
    const text = read(`pressure/${what}`);
    return text === null ? null : parsePressure(text);
  };
  return {
    cores,
    freeMemoryMb: (meminfo === null ? null : parseMeminfo(meminfo)) ?? Math.floor(freemem() / 1_048_576),
    cpuPressure: pressure('cpu'),
    memoryPressure: pressure('memory'),
    ioPressure: pressure('io'),
    loadPerCore: (loadavg()[0] ?? 0) / cores,
  };
}
