import type { SignalType } from '../../epics/transitions.ts';
import type { SignalView } from '../epicTypes.ts';
import type { SignalsPort } from '../shared/signals.ts';
import type { SqliteMethods } from './port.ts';

/** Review signals and their locations (shared/signals.ts). */
export const signalsSql: SqliteMethods<SignalsPort> = {
  insertSignal(epicId, type, summary, by, status, locations) {
    const id = Number(
      this.db
        .prepare(
          'INSERT INTO signals (epic_id, type, summary, created_by, created_at, status) VALUES (?, ?, ?, ?, ?, ?)',
        )
        .run(epicId, type, summary, by, this.now, status).lastInsertRowid,
    );
    const loc = this.db.prepare(
      'INSERT INTO signal_locations (signal_id, file, line, end_line, note) VALUES (?, ?, ?, ?, ?)',
    );
    for (const l of locations) loc.run(id, l.file, l.line, l.endLine, l.note);
    return id;
  },
  signalRow(id) {
    return this.db.prepare('SELECT epic_id, type, status FROM signals WHERE id = ?').get(id) as
      { epic_id: string; type: SignalType; status: string } | undefined;
  },
  closeSignal(id, by, resolution) {
    this.db
      .prepare(
        `UPDATE signals SET status = 'decided', resolved_at = ?, resolved_by = ?, resolution = ? WHERE id = ? AND status = 'awaiting_person'`,
      )
      .run(this.now, by, resolution, id);
  },
  listSignals(epicId, limit) {
    const rows = (
      epicId
        ? this.db.prepare('SELECT * FROM signals WHERE epic_id = ? ORDER BY id DESC LIMIT ?').all(epicId, limit)
        : this.db.prepare('SELECT * FROM signals ORDER BY id DESC LIMIT ?').all(limit)
    ) as Omit<SignalView, 'locations'>[];
    const locs = this.db.prepare(
      'SELECT file, line, end_line, note FROM signal_locations WHERE signal_id = ? ORDER BY id',
    );
    return rows.map((r) => ({ ...r, locations: locs.all(r.id) as SignalView['locations'] }));
  },
};
