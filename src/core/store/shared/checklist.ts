import type { CheckResult, DoctorReport, Finding, Severity } from '../maintenanceTypes.ts';

/** A finding whose fix is a shell command that works as it stands (`after` says what follows it). */
export function commandFinding(
  severity: Severity,
  code: string,
  message: string,
  cmd: string,
  after?: string,
): Finding {
  return { severity, code, message, fix: after ? `${cmd}  # ${after}` : cmd, command: cmd };
}

/** Doctor's checks and findings as they are made, in order; each check's status follows from its findings. */
export class Checklist {
  readonly checks: CheckResult[] = [];
  readonly findings: Finding[] = [];

  check(name: string, found: Finding[], okDetail: string, badDetail?: string): void {
    this.findings.push(...found);
    const status = found.some((f) => f.severity === 'error') ? 'error' : found.length > 0 ? 'warning' : 'ok';
    this.checks.push({
      name,
      status,
      detail: status === 'ok' ? okDetail : (badDetail ?? `${found.length} finding${found.length === 1 ? '' : 's'}`),
    });
  }

  skip(name: string, detail: string): void {
    this.checks.push({ name, status: 'skipped', detail });
  }

  report(dbPath: string): DoctorReport {
    const errors = this.findings.filter((f) => f.severity === 'error').length;
    return {
      ok: errors === 0,
      db_path: dbPath,
      errors,
      warnings: this.findings.length - errors,
      checks: this.checks,
      findings: this.findings,
    };
  }
}
