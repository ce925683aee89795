import type { Op } from '../shared/op.ts';
import type { StepPort } from '../shared/port.ts';
import { StepOperations } from '../shared/stepOperations.ts';
import type { StoreDescription } from '../store.ts';
import { sqliteStepPort } from './stepPort.ts';
import { SqliteTransactions, type SqliteStoreOptions } from './transactions.ts';

/**
 * The step commands' SQLite store (StepStore): the same operations and transactions as SqliteStore's,
 * without the rest, so the step commands' bundle links only what they run (docs/cli-cost.md, "The step store").
 */
export class SqliteStepStore extends StepOperations<StepPort> {
  private readonly sqlite: SqliteTransactions<StepPort>;

  constructor(path: string, options: SqliteStoreOptions = {}) {
    super();
    this.sqlite = new SqliteTransactions(path, options, sqliteStepPort);
  }

  describe(): StoreDescription {
    return this.sqlite.describe();
  }

  close(): Promise<void> {
    return this.sqlite.close();
  }

  protected write<T>(_doing: string, op: (port: StepPort) => Op<T>): Promise<T> {
    return this.sqlite.write(op);
  }

  protected read<T>(_doing: string, op: (port: StepPort) => Op<T>): Promise<T> {
    return this.sqlite.read(op);
  }
}
