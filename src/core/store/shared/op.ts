/**
 * How a store operation is written once for both backends (docs/architecture.md, "Where SQL lives"):
 * as a generator that yields each call it makes to its backend's port (the object that holds the
 * backend's SQL) and is handed the call's result back. SQLite's port answers at once, so its driver
 * (`runSync`) runs the whole operation synchronously inside its `BEGIN IMMEDIATE` transaction;
 * PostgreSQL's port answers with promises, which its driver (`runAsync`) awaits, throwing a rejection
 * back into the generator where the call was made.
 *
 *     const step = yield* call(port.findStep(plan, anchor));
 */

/** What a port's method returns: the value itself (a synchronous backend) or a promise of it. */
export type Io<T> = T | PromiseLike<T>;

/** A store operation: yields its backend calls, returns its result. */
export type Op<T> = Generator<unknown, T, unknown>;

/** One backend call inside an operation: yields it to the driver and returns the result it hands back. */
export function* call<T>(io: Io<T>): Generator<Io<T>, T, unknown> {
  return (yield io) as T;
}

function isPromiseLike(value: unknown): value is PromiseLike<unknown> {
  return typeof value === 'object' && value !== null && typeof (value as { then?: unknown }).then === 'function';
}

/**
 * Runs an operation whose every backend call answers at once, without leaving the caller's stack (so
 * without leaving its transaction). A call that answers with a promise is a bug in the port: refused.
 */
export function runSync<T>(op: Op<T>): T {
  let next = op.next();
  while (!next.done) {
    const value = next.value;
    if (isPromiseLike(value)) {
      op.return(undefined as T);
      throw new Error(
        'a synchronous store port answered with a promise: its operations must not await (docs/architecture.md)',
      );
    }
    next = op.next(value);
  }
  return next.value;
}

/** Runs an operation whose backend calls answer with promises: each is awaited, a rejection thrown back into the operation. */
export async function runAsync<T>(op: Op<T>): Promise<T> {
  let next = op.next();
  while (!next.done) {
    let value: unknown;
    try {
      value = await next.value;
    } catch (err) {
      next = op.throw(err);
      continue;
    }
    next = op.next(value);
  }
  return next.value;
}

/** An operation that is one backend call, with no rule of its own (a plain read or write). */
export function* one<T>(io: Io<T>): Op<T> {
  return yield* call(io);
}
