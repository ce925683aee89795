/**
 * The files of each step of the epics under way, for files-aware scheduling (docs/files.md): declared
 * in the approved plan (`**Files:**`, substeps included), together with what the step's own commits
 * touched; a step that declares none and has no commits yet takes the files its epic changed so far,
 * and a step with none of these has none known (it is scheduled as it always was). Read from the
 * store's approved plan text and from git, never written anywhere; the store knows nothing of it.
 */
import { readHead } from '../git/head.ts';
import { branchFiles, refTips, type BranchFiles } from '../git/branchFiles.ts';
import { parsePlan } from '../plan/parse.ts';
import { UNDER_WAY } from '../scheduler/filesRule.ts';
import type { EpicFiles, EpicSnapshot, SchedulerSnapshot } from '../scheduler/types.ts';
import type { Store } from '../store/index.ts';
import { epicBranch } from './epicWorktree.ts';

/** Another epic whose branch is predicted to conflict with this one's, and where. */
export interface ConflictWith {
  readonly epicId: string;
  readonly files: readonly string[];
}

interface PlanFiles {
  readonly version: number;
  readonly planPath: string;
  /** Top-level anchors in plan order, each with its declared globs and its substeps' anchors. */
  readonly steps: readonly {
    readonly anchor: string;
    readonly declared: readonly string[];
    readonly anchors: readonly string[];
  }[];
}

/**
 * Adds `files` to the snapshot's epics under way. Keeps what it read between passes: each approved
 * plan parsed once per version, each branch's git reading once per pair of tips.
 */
export class StepFiles {
  private readonly plans = new Map<string, PlanFiles>();
  private readonly git = new Map<string, { readonly key: string; readonly files: BranchFiles | null }>();
  private readonly created = new Map<string, string>();

  private readonly store: Store;
  private readonly mainRoot: string;

  constructor(store: Store, mainRoot: string) {
    this.store = store;
    this.mainRoot = mainRoot;
  }

  /** The snapshot with each epic under way given its files; `conflicts` (by epic) adds the predicted conflicts between branches. */
  async annotate(
    snapshot: SchedulerSnapshot,
    conflicts: ReadonlyMap<string, readonly ConflictWith[]> = new Map(),
  ): Promise<SchedulerSnapshot> {
    const active = snapshot.epics.filter((e) => UNDER_WAY.includes(e.status));
    if (active.length === 0) return snapshot;
    const head = readHead(this.mainRoot, process.env);
    const refs = active.map((e) => `refs/heads/${epicBranch(e.id)}`);
    const tips = await refTips(this.mainRoot, refs, process.env);
    // The branches are read at once: each pass waits for them before it decides (docs/files.md).
    const branches = await Promise.all(
      active.map((epic) => {
        const tip = tips.get(`refs/heads/${epicBranch(epic.id)}`) ?? null;
        return tip && head?.commit ? this.branchOf(epic.id, head.commit, tip) : null;
      }),
    );
    const files = new Map<string, EpicFiles>();
    for (const [i, epic] of active.entries())
      files.set(epic.id, await this.filesOf(epic, branches[i] ?? null, conflicts.get(epic.id) ?? []));
    return {
      ...snapshot,
      epics: snapshot.epics.map((e) => {
        const f = files.get(e.id);
        return f ? { ...e, files: f } : e;
      }),
    };
  }

  private async filesOf(
    epic: EpicSnapshot,
    branch: BranchFiles | null,
    conflicts: readonly ConflictWith[],
  ): Promise<EpicFiles> {
    const changed = branch?.changed ?? [];
    const openSteps: Record<string, readonly string[]> = {};
    const plan = epic.status === 'in_progress' ? await this.planOf(epic.id) : null;
    const completed = plan ? await this.completedSteps(plan.planPath) : null;
    for (const step of plan && completed ? plan.steps : []) {
      if (completed?.has(step.anchor)) continue;
      const committed = step.anchors.flatMap((a) => branch?.bySteps.get(a) ?? []);
      const known = [...new Set([...step.declared, ...committed])];
      // A step that names no files and has no commits of its own is taken to touch what its epic touched so far.
      const files = known.length > 0 ? known : changed;
      if (files.length > 0) openSteps[step.anchor] = files;
    }
    return { openSteps, changed, createdAt: await this.createdAt(epic.id), conflictsWith: conflicts };
  }

  private async branchOf(epicId: string, base: string, tip: string): Promise<BranchFiles | null> {
    const key = `${base}..${tip}`;
    const cached = this.git.get(epicId);
    if (cached?.key === key) return cached.files;
    const files = await branchFiles(this.mainRoot, base, tip, process.env);
    this.git.set(epicId, { key, files });
    return files;
  }

  /** The approved plan's steps and their declared files, or null before approval (or when its text does not parse). */
  private async planOf(epicId: string): Promise<PlanFiles | null> {
    const { approved, livePlanPath } = await this.store.epicPlans(epicId);
    if (!approved) return null;
    const planPath = livePlanPath ?? approved.planPath;
    const cached = this.plans.get(epicId);
    if (cached?.version === approved.version && cached.planPath === planPath) return cached;
    let parsed;
    try {
      parsed = parsePlan(approved.body, approved.planPath);
    } catch {
      return null;
    }
    const steps = parsed.steps
      .filter((s) => s.parentAnchor === null)
      .map((top) => {
        const family = parsed.steps.filter((s) => s === top || s.parentAnchor === top.anchor);
        return {
          anchor: top.anchor,
          declared: [...new Set(family.flatMap((s) => s.files))],
          anchors: family.map((s) => s.anchor),
        };
      });
    const plan: PlanFiles = { version: approved.version, planPath, steps };
    this.plans.set(epicId, plan);
    return plan;
  }

  private async completedSteps(planPath: string): Promise<Set<string> | null> {
    try {
      return new Set((await this.store.ready(planPath)).completed_steps);
    } catch {
      return null;
    }
  }

  private async createdAt(epicId: string): Promise<string> {
    let at = this.created.get(epicId);
    if (at === undefined) {
      at = (await this.store.getEpic(epicId)).created_at;
      this.created.set(epicId, at);
    }
    return at;
  }
}
