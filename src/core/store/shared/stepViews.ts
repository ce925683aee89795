import type { ItemView, StepRecord, StepStatus, StepView } from '../types.ts';

/** Step rows as views, substeps under their parents; `status` gives every dependency's status; `now` is ISO 8601. Both backends build their views here. */
export function stepViews(
  now: string,
  steps: readonly StepRecord[],
  deps: readonly { step_anchor: string; depends_on: string }[],
  items: readonly (ItemView & { step_anchor: string })[],
  status: ReadonlyMap<string, StepStatus>,
): { top: StepView[]; itemsDone: number } {
  const depsOf = group(
    deps,
    (d) => d.step_anchor,
    (d) => d.depends_on,
  );
  const itemsOf = group(
    items,
    (i) => i.step_anchor,
    ({ step_anchor: _, ...i }) => i,
  );
  const views = new Map<string, StepView & { substeps: StepView[] }>();
  const top: StepView[] = [];
  let itemsDone = 0;
  for (const s of steps) {
    const own = itemsOf.get(s.anchor) ?? [];
    const dependsOn = depsOf.get(s.anchor) ?? [];
    const done = own.filter((i) => i.status === 'completed').length;
    itemsDone += done;
    const view = {
      anchor: s.anchor,
      parent_anchor: s.parent_anchor,
      number: s.number,
      title: s.title,
      step_index: s.step_index,
      status: s.status,
      claimed_by: s.claimed_by,
      agent: s.claimed_agent,
      claim_token: s.claim_token,
      claimed_at: s.claimed_at,
      lease_expires_at: s.lease_expires_at,
      lease_expired: s.status !== 'completed' && s.lease_expires_at !== null && s.lease_expires_at < now,
      heartbeat_at: s.heartbeat_at,
      started_at: s.started_at,
      completed_at: s.completed_at,
      commit_hash: s.commit_hash,
      complete_reason: s.complete_reason,
      depends_on: dependsOn,
      blocked_by: dependsOn.filter((d) => status.get(d) !== 'completed'),
      items: own,
      progress: { done, total: own.length },
      substeps: [] as StepView[],
    };
    views.set(s.anchor, view);
    const parent = s.parent_anchor ? views.get(s.parent_anchor) : undefined;
    if (parent) parent.substeps.push(view);
    else top.push(view);
  }
  return { top, itemsDone };
}

function group<T, V>(rows: readonly T[], key: (r: T) => string, value: (r: T) => V): Map<string, V[]> {
  const out = new Map<string, V[]>();
  for (const r of rows) {
    const k = key(r);
    const list = out.get(k);
    if (list) list.push(value(r));
    else out.set(k, [value(r)]);
  }
  return out;
}
