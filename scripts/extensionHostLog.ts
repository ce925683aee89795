// Reading the remote extension host's log as a person would: which errors are Springfield's to answer for.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The remote extension host's log files under `logsDir` (`<session>/exthost<n>/remoteexthost.log`), joined. */
export function extensionHostLog(logsDir: string): string {
  const read = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
      e.isDirectory() ? read(join(dir, e.name)) : e.name === 'remoteexthost.log' ? [join(dir, e.name)] : [],
    );
  return existsSync(logsDir)
    ? read(logsDir)
        .sort()
        .map((f) => readFileSync(f, 'utf8'))
        .join('')
    : '';
}

export interface HostErrors {
  /** Errors a person would lay at Springfield's door: logged while the host ran, or naming Springfield. */
  errors: string[];
  /**
   * Errors logged after the host was told to terminate (a window reload or folder change) that do not
   * name Springfield: VS Code's own extensions writing to output channels already closed
   * ("Channel has been closed"), seen under load. Reported, not counted.
   */
  atShutdown: string[];
}

/** Each `[error]` entry of `log` with the stack lines under it, sorted into Springfield's and shutdown noise. */
export function extensionHostErrors(log: string): HostErrors {
  const found: HostErrors = { errors: [], atShutdown: [] };
  let terminating = false;
  for (const entry of log.split(/\n(?=\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)/)) {
    if (/\[info\] Extension host with pid \d+ started/.test(entry)) terminating = false;
    else if (/\[info\] Extension host terminating/.test(entry)) terminating = true;
    if (!/^\S+ \S+ \[error\]/.test(entry)) continue;
    const text = entry.trimEnd();
    if (terminating && !/springfield/i.test(text)) found.atShutdown.push(text);
    else found.errors.push(text);
  }
  return found;
}
