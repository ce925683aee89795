// A node:test reporter for scripts/runTests.ts: counts each file's passed, failed (cancelled ones
// included) and skipped tests as node's own summary does (suites are not tests; a file that fails to
// load is one failure) and the time of its top-level tests, and writes them as one JSON object at the end.
interface TestEvent {
  readonly type: string;
  readonly data: {
    readonly file?: string;
    readonly nesting?: number;
    readonly skip?: unknown;
    readonly todo?: unknown;
    readonly details?: { readonly type?: string; readonly duration_ms?: number };
  };
}

export interface FileTally {
  pass: number;
  fail: number;
  skip: number;
  ms: number;
}

export default async function* testTally(source: AsyncIterable<TestEvent>): AsyncGenerator<string> {
  const files: Record<string, FileTally> = {};
  for await (const { type, data } of source) {
    if (type !== 'test:pass' && type !== 'test:fail') continue;
    const tally = (files[data.file ?? '(no file)'] ??= { pass: 0, fail: 0, skip: 0, ms: 0 });
    if (data.nesting === 0) tally.ms += data.details?.duration_ms ?? 0;
    if (data.details?.type === 'suite') continue;
    if (type === 'test:fail') tally.fail++;
    else if (data.skip !== undefined || data.todo !== undefined) tally.skip++;
    else tally.pass++;
  }
  yield JSON.stringify(files) + '\n';
}
