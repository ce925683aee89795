/**
 * Files-aware scheduling's part of the orchestrator's pass (docs/files.md): the files of the epics
 * under way added to each snapshot, the epic's branch brought up to main before a step that main's
 * changes touch, and the conflicts ahead tested after each build. Everything it knows is read from
 * the store's plan text and git, and forgotten with the scheduler.
 */
import { messageOf } from '../../shared/errorMessage.ts';
import { filesAwareOf, type RunConfig } from '../runs/runConfig.ts';
import type { EpicFiles, SchedulerSnapshot } from '../scheduler/types.ts';
import type { Store } from '../store/index.ts';
import { ConflictForecast } from './conflictForecast.ts';
import type { ConflictAhead } from './conflictsAhead.ts';
import { StepFiles } from './stepFiles.ts';
import { refreshForStep } from './stepRefresh.ts';
import type { Resolving } from './merge.ts';
import { describeResolutions } from './mergeConflicts.ts';
import { busySteps, withoutHotspots } from '../scheduler/filesRule.ts';
import { assignWaves } from '../scheduler/waves.ts';
import { globsOverlap } from '../scheduler/fileGlobs.ts';
import { isBuiltInMergeable } from '../git/mergeKinds.ts';

export interface FilesAwareOptions {
  readonly store: Store;
  readonly mainRoot: string;
  readonly config: RunConfig;
  readonly log: (line: string) => void;
  /** Logs a line once per key (the same news every pass is said once). */
  readonly logOnce: (key: string, line: string) => void;
  /** How a rebase in the epic's worktree resolves what resolves itself (EpicWork.resolving). */
  readonly resolving?: (epicId: string, worktree: string) => Promise<Resolving>;
}

export class FilesAware {
  private readonly config: FilesAwareOptions['config'];
  private readonly log: FilesAwareOptions['log'];
  private readonly logOnce: FilesAwareOptions['logOnce'];
  private readonly mainRoot: FilesAwareOptions['mainRoot'];
  private readonly resolving: FilesAwareOptions['resolving'];
  private readonly steps: StepFiles;
  private readonly forecast: ConflictForecast;
  private filesNow = new Map<string, EpicFiles>();
  private waves = new Map<string, number>();

  constructor(options: FilesAwareOptions) {
    this.config = options.config;
    this.log = options.log;
    this.logOnce = options.logOnce;
    this.mainRoot = options.mainRoot;
    this.resolving = options.resolving;
    this.steps = new StepFiles(options.store, options.mainRoot);
    this.forecast = new ConflictForecast(options.mainRoot, options.logOnce);
  }

  /** The conflicts ahead the forecast knows, per epic under way (docs/files.md). */
  get conflictsAhead(): ReadonlyMap<string, readonly ConflictAhead[]> {
    return this.forecast.all;
  }

  /**
   * The snapshot with the files of the epics under way and the conflicts predicted between them, when
   * files-aware scheduling is on. Git failing to answer is logged once and the pass goes on as if it were off.
   */
  async annotate(snapshot: SchedulerSnapshot): Promise<SchedulerSnapshot> {
    try {
      // Conflicts ahead are predicted with files-aware scheduling off too: they are news either way.
      await this.forecast.start(snapshot.epics);
      if (!filesAwareOf(this.config)) return snapshot;
      const found = await this.steps.annotate(snapshot, this.forecast.between(snapshot.epics));
      const hotspot = hotspotsOf(this.config);
      const stripped = {
        ...found,
        epics: found.epics.map((e) => (e.files ? { ...e, files: withoutHotspots(e.files, hotspot) } : e)),
      };
      // Waves are kept from pass to pass, so two epics never trade places (waves.ts).
      this.waves = assignWaves(stripped.epics, this.waves, busySteps(stripped));
      const annotated = {
        ...stripped,
        epics: stripped.epics.map((e) =>
          e.files ? { ...e, files: { ...e.files, wave: this.waves.get(e.id) ?? 0 } } : e,
        ),
      };
      this.filesNow = new Map(annotated.epics.flatMap((e) => (e.files ? [[e.id, e.files] as const] : [])));
      return annotated;
    } catch (err) {
      const message = messageOf(err);
      this.logOnce(`files:${message}`, `files-aware scheduling skipped this pass: ${message}`);
      return snapshot;
    }
  }

  /**
   * Before a builder starts on a step whose files the default branch changed since the epic left it,
   * the epic's branch is rebased there. A rebase that would conflict is aborted and the build goes on;
   * the conflict ahead says so.
   */
  async beforeStep(epicId: string, stepAnchor: string, worktree: string): Promise<void> {
    if (!filesAwareOf(this.config)) return;
    const files = this.filesNow.get(epicId)?.openSteps[stepAnchor] ?? [];
    try {
      const r = await refreshForStep(this.mainRoot, worktree, files, await this.resolving?.(epicId, worktree));
      if (r.kind === 'rebased')
        this.log(
          `${epicId}: rebased onto ${r.onto} before ${stepAnchor}, which touches ${r.file} that ${r.onto} changed${r.resolutions.length ? ` (resolved mechanically: ${describeResolutions(r.resolutions).join('; ')})` : ''}`,
        );
      if (r.kind === 'conflict') this.log(`${epicId}: not rebased before ${stepAnchor}: ${r.reason}`);
    } catch (err) {
      this.log(`${epicId}: not rebased before ${stepAnchor}: ${messageOf(err)}`);
    }
  }

  /** After a build: the branch as it left it, test-merged against main and the other epics under way. */
  async afterBuild(epicId: string): Promise<void> {
    try {
      await this.forecast.after(epicId);
    } catch (err) {
      this.log(`${epicId}: conflict ahead not checked: ${messageOf(err)}`);
    }
  }
}

/** Whether a path is a hotspot: a built-in kind (lockfile, version manifest, changelog), or named by the config's `mergeable` or `regenerate` globs. */
export function hotspotsOf(config: RunConfig): (path: string) => boolean {
  if (config.mechanicalMerge === false) return () => false;
  const globs = [...(config.mergeable ?? []), ...Object.keys(config.regenerate ?? {})];
  return (path) => isBuiltInMergeable(path) || globs.some((g) => globsOverlap(path, g));
}
