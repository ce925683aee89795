import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { handoffFileName } from '../epics/handoff.ts';
import { RefusedError } from '../errors.ts';
import { planMdWithRetrospective, renderRetrospective } from '../epics/retrospective.ts';
import { gitOutAsync } from '../git/exec.ts';
import { loadPlanSource } from '../plan/source.ts';
import { worktreeCommandEnv } from './worktreeEnv.ts';
import { releaseWorktreePorts, worktreeFacts } from './worktreePorts.ts';
import { stopApp } from './apps.ts';
import { timeoutFor, type RunConfig } from '../runs/runConfig.ts';
import { SETUP_ROLE, type Actor, type EpicRow, type Store } from '../store/index.ts';
import { RebaseConflict, rebaseOntoMain, regenerateOf, squashMerge, type Resolving } from './merge.ts';
import {
  conflictBrief,
  describeResolutions,
  recordConflict,
  settleSession,
  type ResolvedBy,
} from './mergeConflicts.ts';
import type { Resolution } from '../git/rebaseResolve.ts';
import { openPullRequest, PullRequestBlocked, pullRequestState } from './pullRequest.ts';
import { archiveWorktree, setUpWorktree, setupWanted } from './setup.ts';
import { renderSummary, summaryFileName, writeSummary } from './summary.ts';
import { displayCommand, runCommand, runVerification, SlotPool } from './verify.ts';
import { depositApprovedPlan, ensureEpicWorktree, epicBranch, removeEpicWorktree } from './epicWorktree.ts';
import { describeTidy, tidyWorktree } from './worktreeState.ts';
import { slotsOf } from './fleetConfig.ts';
import { startEpicInWorktree } from './epicStart.ts';
import type { PlanSource } from '../plan/types.ts';
import { messageOf } from '../../shared/errorMessage.ts';
import { BUILDING_ROLE } from '../../shared/roles.ts';

export interface EpicWorkOptions {
  readonly store: Store;
  readonly mainRoot: string;
  readonly config: RunConfig;
  readonly log: (line: string) => void;
  readonly worktreeLocation?: string;
  readonly actor: Actor;
  /** A real conflict at the merge: one bounded Ralph session in the epic's worktree with `brief` in its context; resolves with its exit code (docs/files.md). */
  readonly resolveConflict?: (epicId: string, worktree: string, brief: string) => Promise<number>;
  readonly beforeWorktreeRemoved?: (path: string) => Promise<void>;
  /** The epic is recorded merged (done); its worktree is closed after (docs/files.md, "Scheduling"). */
  readonly merged?: (epicId: string) => void;
}

/** How a merge that met a conflict landed: who resolved it, what and how. */
interface Landed {
  readonly by: ResolvedBy;
  readonly files: readonly string[];
  readonly resolutions: readonly Resolution[];
}

/**
 * What the scheduler does to an epic's worktree itself, without an agent: start it (worktree,
 * handoff, approved plan), set it up, keep it in a known state, check the builder's plan, verify,
 * complete mechanically and merge (docs/scheduler-faults.md).
 */
export class EpicWork {
  private readonly actor: Actor;
  private readonly store: EpicWorkOptions['store'];
  private readonly mainRoot: EpicWorkOptions['mainRoot'];
  private readonly worktreeLocation: EpicWorkOptions['worktreeLocation'];
  private readonly log: EpicWorkOptions['log'];
  private readonly config: EpicWorkOptions['config'];
  private readonly resolveConflict: EpicWorkOptions['resolveConflict'];
  private readonly beforeWorktreeRemoved: EpicWorkOptions['beforeWorktreeRemoved'];
  private readonly merged: EpicWorkOptions['merged'];
  private readonly pool: SlotPool;
  private readonly mergeQueue = new SlotPool(1);

  constructor(options: EpicWorkOptions) {
    this.actor = options.actor;
    this.store = options.store;
    this.mainRoot = options.mainRoot;
    this.worktreeLocation = options.worktreeLocation;
    this.log = options.log;
    this.config = options.config;
    this.resolveConflict = options.resolveConflict;
    this.beforeWorktreeRemoved = options.beforeWorktreeRemoved;
    this.merged = options.merged;
    // decide() holds a verification while its slots are taken; a merge's re-verification waits here for one.
    this.pool = new SlotPool(slotsOf(options.config).verification);
  }

  async startEpic(epicId: string): Promise<void> {
    const {
      transition: t,
      worktree: wt,
      version,
    } = await startEpicInWorktree(this.store, this.mainRoot, epicId, this.actor, this.worktreeLocation);
    if (wt.dirty.length > 0)
      this.log(
        `${epicId}: worktree ${wt.path} has uncommitted changes (${wt.dirty.slice(0, 3).join(', ')}); left as they are`,
      );
    this.log(
      `${epicId}: ${t.from} → ${t.to} in ${wt.path}${wt.created ? ' (new worktree)' : ''}${wt.handoffCommitted && version !== null ? ` with approved plan v${version} committed` : ''}`,
    );
  }

  /**
   * The epic, with a worktree of its own: one that has none (started by an older Springfield, or
   * recorded in the main worktree) gets it now at its branch's tip, before anything runs
   * (docs/lifecycle.md). A branch checked out in a person's worktree is refused with where: the
   * epic waits for it.
   */
  async epicPlace(epicId: string): Promise<EpicRow> {
    const epic = await this.store.getEpic(epicId);
    if (epic.worktree_path && epic.worktree_path !== this.mainRoot) return epic;
    const approved = (await this.store.epicPlans(epicId)).approved;
    const wt = await ensureEpicWorktree(this.mainRoot, epicId, this.worktreeLocation, approved ?? undefined);
    await this.store.setEpicWorktree(epicId, wt.path, wt.branch);
    this.log(`${epicId}: it had no worktree of its own; gave it ${wt.path} on ${wt.branch}`);
    await this.store.recordWorktreeEvent(epicId, this.actor, 'adopt', `its own worktree ${wt.path} on ${wt.branch}`, {
      path: wt.path,
      branch: wt.branch,
    });
    return { ...epic, worktree_path: wt.path, branch: wt.branch };
  }

  /**
   * Puts the epic's own worktree in a known state before anything runs there (a missing one is made
   * again): a stale git lock cleared, the epic's branch back, leftovers committed as WIP.
   */
  async tidy(epic: EpicRow): Promise<void> {
    if (!epic.worktree_path || !epic.branch || epic.worktree_path === this.mainRoot) return;
    if (!existsSync(epic.worktree_path)) {
      const approved = (await this.store.epicPlans(epic.id)).approved;
      await ensureEpicWorktree(this.mainRoot, epic.id, this.worktreeLocation, approved ?? undefined);
      this.log(`${epic.id}: its worktree was gone; made it again at ${epic.worktree_path}`);
    }
    const last = await this.store.latestRun(epic.id);
    const label = last
      ? `after run ${last.id} (${last.role}${last.step_anchor ? ` on ${last.step_anchor}` : ''}, ${last.status})`
      : 'found in the worktree';
    const report = await tidyWorktree(epic.worktree_path, epic.branch.replace(/^refs\/heads\//, ''), label);
    const line = describeTidy(report);
    if (!line) return;
    this.log(`${epic.id}: ${line}`);
    await this.store.recordWorktreeEvent(epic.id, this.actor, 'tidy', line, { ...report });
  }

  /**
   * The plan a builder works from, read in the epic's worktree: restored from the approved text if
   * an agent removed it; when its structure drifted from the approved version, the epic is blocked
   * (plan_drift) with the changes and null is returned, so no builder starts.
   */
  async builderPlan(epic: EpicRow, planPath: string, worktree: string): Promise<PlanSource | null> {
    const approved = (await this.store.epicPlans(epic.id)).approved;
    if (approved && worktree !== this.mainRoot && !existsSync(join(worktree, planPath))) {
      await depositApprovedPlan(worktree, epic.id, approved);
      this.log(
        `${epic.id}: ${planPath} was missing from the worktree; committed the approved v${approved.version} again`,
      );
    }
    let changes: string[];
    let source: PlanSource | null = null;
    try {
      source = loadPlanSource(worktree, planPath);
      const current = source;
      changes = await this.store.changesSinceInit(planPath, current);
    } catch (err) {
      changes = [messageOf(err)];
    }
    if (changes.length === 0) return source;
    const reason = `plan_drift: ${planPath} in ${worktree} differs from the approved${approved ? ` v${approved.version}` : ''} (${changes.slice(0, 5).join('; ')}${changes.length > 5 ? '; …' : ''}); restore it (springfield plan show ${epic.id} has the approved text) and retry`;
    const t = await this.store.applyEpicEvent(epic.id, 'plan_drift', this.actor, reason, {
      plan_path: planPath,
      changes,
    });
    this.log(`${epic.id}: ${t.from} → ${t.to}: no builder starts on a drifted plan — ${reason}`);
    return null;
  }

  /**
   * Makes a planning worktree ready like an epic's (`.worktreeinclude` files, the setup commands)
   * before Lisa starts there. Returns null when it is ready, else what failed: the setup's output
   * ending with the reason in one line, which becomes Lisa's failed run (a fault that counts toward
   * the retry limit: docs/scheduler-faults.md).
   */
  async setUpPlanning(epicId: string, worktree: string): Promise<string | null> {
    if (!setupWanted(this.mainRoot, this.config.setup)) return null;
    const r = await setUpWorktree({
      mainRoot: this.mainRoot,
      worktree,
      commands: this.config.setup,
      timeoutMs: timeoutFor(this.config, 'setup') * 1000,
      graceMs: this.config.killGraceSeconds * 1000,
      env: await this.commandEnv(await this.store.getEpic(epicId), worktree),
    });
    this.log(`${epicId}: planning worktree ${r.ok ? 'set up' : `not set up — ${r.reason ?? 'setup failed'}`}`);
    return r.ok ? null : `${r.output}\nsetup of the planning worktree failed: ${r.reason ?? 'setup failed'}`;
  }

  /** Copies `.worktreeinclude` files and runs the setup commands in the epic's worktree, recorded like an agent run. */
  async setup(epicId: string): Promise<void> {
    const epic = await this.store.getEpic(epicId);
    const worktree = epic.worktree_path;
    if (!worktree) return;
    const commands = this.config.setup;
    const shown = commands.length ? commands.map(displayCommand) : ['copy the files .worktreeinclude lists'];
    const run = await this.store.startRun(
      {
        epicId,
        planPath: null,
        stepAnchor: null,
        role: SETUP_ROLE,
        iteration: epic.iteration,
        worktree,
        agentId: SETUP_ROLE,
        command: shown,
        pid: process.pid,
      },
      this.actor,
    );
    this.log(`${epicId}: setting up ${worktree} (run #${run.id}: ${shown.join('; ')})`);
    const r = await setUpWorktree({
      mainRoot: this.mainRoot,
      worktree,
      commands,
      timeoutMs: timeoutFor(this.config, 'setup') * 1000,
      graceMs: this.config.killGraceSeconds * 1000,
      env: await this.commandEnv(epic, worktree),
    });
    const ended = await this.store.finishRun(
      run.id,
      { exitCode: r.exitCode, signal: null, timedOut: r.timedOut, outputTail: r.output, fault: r.reason },
      this.actor,
    );
    this.log(`${epicId}: setup ${ended.status}${r.reason ? ` — ${r.reason}` : ''}`);
  }

  /** What setup, verification and archive commands in an epic's worktree are told: its epic, paths, ports and the config's env map (docs/worktrees.md). */
  private async commandEnv(epic: EpicRow, worktree: string): Promise<NodeJS.ProcessEnv> {
    const facts = await worktreeFacts(this.store, {
      epic,
      worktree,
      mainRoot: this.mainRoot,
      config: this.config,
      env: process.env,
    });
    return worktreeCommandEnv(process.env, facts);
  }

  async verify(epicId: string): Promise<void> {
    const epic = await this.store.getEpic(epicId);
    await this.tidy(epic);
    const worktree = epic.worktree_path ?? this.mainRoot;
    // The evidence is tied to the build it followed: the latest builder run and its step.
    const build = {
      run: await this.store.latestRun(epicId, BUILDING_ROLE),
      planPath: (await this.store.epicPlans(epicId)).livePlanPath,
    };
    const runId = build.run?.id ?? null;
    const env = await this.commandEnv(epic, worktree);
    const results = await this.pool.use(() => runVerification(this.config.verification, worktree, env));
    await this.store.recordVerifications(
      results.map((r) => ({
        runId,
        epicId,
        planPath: build.planPath,
        stepAnchor: build.run?.step_anchor ?? null,
        command: r.command,
        exitCode: r.exit_code,
        verdict: r.verdict,
        durationMs: r.duration_ms,
        outputTail: r.output_tail,
      })),
    );
    const failed = results.find((r) => r.verdict === 'fail');
    this.log(`${epicId}: verification ${failed ? `FAILED (${failed.command} exited ${failed.exit_code})` : 'passed'}`);
  }

  async completeMechanically(epicId: string): Promise<void> {
    const epic = await this.store.getEpic(epicId);
    await this.tidy(epic);
    const worktree = epic.worktree_path ?? this.mainRoot;
    const path = writeSummary(await this.store.epicReport(epicId), worktree);
    await gitOutAsync(worktree, ['add', '--', summaryFileName(epicId)], process.env);
    await gitOutAsync(
      worktree,
      [
        'commit',
        '-q',
        '-m',
        `Summary of ${epicId}`,
        '--trailer',
        `Springfield-Epic: ${epicId}`,
        '--',
        summaryFileName(epicId),
      ],
      process.env,
    );
    const verified = this.config.verification.length > 0 ? 'verification passed' : 'no verification configured';
    const t = await this.store.finishEpic(
      epicId,
      this.actor,
      `mechanical completion: all steps completed, ${verified}; ${path}`,
      { verificationConfigured: this.config.verification.length > 0 },
    );
    this.log(`${epicId}: ${t.from} → ${t.to} (mechanical completion, no agent session)`);
  }

  /** One merge at a time: rebase onto the current main, verify again, then land; archive, then remove the worktree. */
  /** Merges through the queue: one at a time. */
  merge(epicId: string): Promise<void> {
    return this.mergeQueue.use(() => this.mergeNow(epicId));
  }

  private async mergeNow(epicId: string): Promise<void> {
    try {
      await this.landNow(epicId);
    } catch (err) {
      if (!(err instanceof RefusedError) || err.code !== 'merge_conflict') throw err;
      let conflict: RefusedError = err;
      // A real conflict goes to Ralph first: one session; only if that fails is it a person's (docs/files.md).
      if (conflict instanceof RebaseConflict && (await this.ralphResolves(epicId, conflict))) {
        try {
          await this.landNow(epicId, { by: BUILDING_ROLE, files: conflict.files, resolutions: [] });
          return;
        } catch (again) {
          if (!(again instanceof RefusedError) || again.code !== 'merge_conflict') throw again;
          conflict = again;
        }
      }
      const files = conflict instanceof RebaseConflict ? conflict.files : [];
      await recordConflict(this.store, epicId, this.actor, 'person', files, []);
      // A conflict waits for someone to resolve it; trying again every pass would change nothing (docs/files.md, "Conflict ahead").
      const t = await this.store.applyEpicEvent(
        epicId,
        'merge_failed',
        this.actor,
        `merge_failed: ${conflict.message}, then springfield epic retry ${epicId}`,
        { conflict: true },
      );
      this.log(
        `${epicId}: ${t.from} → ${t.to}: ${conflict.message}; once it is resolved: springfield epic retry ${epicId}`,
      );
    }
  }

  /** One Ralph session on a real conflict; true when it left the branch rebased, false (and the branch as it was) otherwise. */
  private async ralphResolves(epicId: string, conflict: RebaseConflict): Promise<boolean> {
    const epic = await this.store.getEpic(epicId);
    const worktree = epic.worktree_path;
    if (!this.resolveConflict || !this.config.roles.ralph || !worktree || !epic.branch) return false;
    const git = (args: readonly string[]) => gitOutAsync(worktree, args, process.env);
    const before = (await git(['rev-parse', 'HEAD'])).trim();
    const brief = await conflictBrief(this.store, worktree, epicId, conflict);
    this.log(`${epicId}: ${conflict.message}; Ralph resolves it (one session)`);
    const code = await this.resolveConflict(epicId, worktree, brief);
    const branch = epic.branch.replace(/^refs\/heads\//, '');
    const why = await settleSession(worktree, branch, conflict.target, before, code);
    if (why) this.log(`${epicId}: Ralph's session on the conflict ${why}; the branch is as it was`);
    return why === null;
  }

  /** What a rebase in the epic's worktree resolves by itself: the config's regeneration commands, run there like its verification. */
  resolving(epic: EpicRow, worktree: string): Resolving {
    return {
      mechanical: this.config.mechanicalMerge !== false,
      regenerate: regenerateOf(this.config),
      run: async (argv) => {
        const env = await this.commandEnv(epic, worktree);
        const r = await runCommand(argv, worktree, env, timeoutFor(this.config, 'setup') * 1000);
        if (r.verdict === 'pass') return null;
        const last = r.output_tail.trimEnd().split('\n').at(-1) ?? '';
        return `${r.command} ${r.timed_out ? 'timed out' : `exited ${r.exit_code}`}${last ? `: ${last}` : ''}`;
      },
    };
  }

  /**
   * Rebases onto main (resolving what resolves itself), verifies again when anything moved or was
   * resolved, and lands. A mechanical resolution that fails verification is undone and thrown as the
   * real conflict it is. `landed` says who resolved a conflict met before (Ralph's session).
   */
  private async landNow(epicId: string, landed?: Landed): Promise<void> {
    const epic = await this.store.getEpic(epicId);
    const worktree = epic.worktree_path;
    let outcome = landed;
    if (worktree && existsSync(worktree)) {
      await this.tidy(epic);
      const r = await rebaseOntoMain(this.mainRoot, worktree, this.resolving(epic, worktree));
      if (r.resolutions.length > 0) {
        const files = [...new Set(r.resolutions.map((x) => x.file))];
        outcome = landed ?? { by: 'mechanical', files, resolutions: r.resolutions };
        this.log(`${epicId}: resolved mechanically — ${describeResolutions(r.resolutions).join('; ')}`);
      }
      if ((r.moved || landed) && this.config.verification.length > 0) {
        await this.verify(epicId);
        if ((await this.store.lastVerdict(epicId)) === 'fail') {
          if (r.resolutions.length > 0 && !landed) {
            await gitOutAsync(worktree, ['reset', '-q', '--hard', r.before], process.env);
            const files = outcome?.files ?? [];
            throw new RebaseConflict(
              `rebasing onto ${r.target}: the mechanical resolution of ${files.join(', ')} fails verification (undone)`,
              r.target,
              files,
              '',
              r.resolutions,
            );
          }
          this.log(`${epicId}: verification fails on the new main; not merged (it waits for a fix)`);
          return;
        }
      }
    }
    // A person's Request changes may have sent it back while it was rebased and verified again: then it does not land.
    if (!(await this.stillVerified(epicId))) return;
    if (this.config.merge === 'pr') {
      await this.openPullRequest(epic);
      if (outcome) await recordConflict(this.store, epicId, this.actor, outcome.by, outcome.files, outcome.resolutions);
      return;
    }
    // Lovejoy, mechanically: the retrospective goes into the squash commit (summary and PLAN.md) and the event log.
    const retro = await this.store.retrospective(epicId);
    const notes = {
      summary: (text: string) => `${text.trimEnd()}\n\n${renderRetrospective(retro).join('\n')}`,
      planMd: (text: string) => planMdWithRetrospective(text, epicId, retro),
    };
    const body = outcome ? resolvedBody(outcome) : undefined;
    const r = await squashMerge(this.mainRoot, epicId, epic.title, notes, body);
    await this.store.markMerged(
      epicId,
      this.actor,
      `squash-merged as ${r.commit_hash.slice(0, 12)} with ${r.trailers} trailers`,
      retro,
    );
    if (outcome) await recordConflict(this.store, epicId, this.actor, outcome.by, outcome.files, outcome.resolutions);
    // Epics held by its files may go on now, while its worktree is archived and removed.
    this.merged?.(epicId);
    await this.closeWorktree(epic, `merged as ${r.commit_hash.slice(0, 12)}`);
  }

  /** The epic is still verified, read just before it lands; otherwise says why it is not merged (done: the merge before it in the queue landed it, nothing to say). */
  private async stillVerified(epicId: string): Promise<boolean> {
    const { status } = await this.store.getEpic(epicId);
    if (status === 'verified') return true;
    if (status === 'done') return false;
    const why =
      status === 'in_progress'
        ? 'sent back while it was prepared for the merge'
        : 'it changed while it was prepared for the merge';
    this.log(`${epicId}: not merged: it is ${status.replace('_', ' ')} now (${why})`);
    return false;
  }

  /** After the merge: the archive commands, then the worktree and its branch removed (kept if archiving failed). */
  private async closeWorktree(epic: EpicRow, what: string): Promise<void> {
    const worktree = epic.worktree_path;
    // The epic's app goes with its worktree (docs/worktrees.md, "Running an epic's app").
    if (worktree && (await stopApp(worktree, this.config.killGraceSeconds * 1000)))
      this.log(`${epic.id}: its app was stopped`);
    const failed =
      worktree && existsSync(worktree)
        ? await archiveWorktree(
            worktree,
            this.config.archive,
            await this.commandEnv(epic, worktree),
            timeoutFor(this.config, 'setup') * 1000,
          )
        : null;
    if (failed) {
      this.log(
        `${epic.id}: ${what}; done. The archive command \`${failed.command}\` exited ${failed.exit_code}, so the worktree ${worktree} is kept (fix it, then \`springfield worktrees prune\` archives and removes it):\n${failed.output_tail.trimEnd().split('\n').slice(-5).join('\n')}`,
      );
      return;
    }
    if (worktree) await this.beforeWorktreeRemoved?.(worktree).catch(() => undefined);
    await removeEpicWorktree(this.mainRoot, epic.id, this.worktreeLocation);
    if (worktree) await releaseWorktreePorts(this.store, worktree, process.env);
    // The store forgets a worktree that is gone, so no surface names it (one kept elsewhere stays recorded).
    if (worktree && !existsSync(worktree)) await this.store.forgetEpicWorktree(epic.id, worktree);
    this.log(`${epic.id}: ${what}; worktree removed; done`);
  }

  /**
   * PR mode: push the branch and open a pull request whose body is the epic's summary and commits; the
   * epic stays verified with the URL until checkPullRequest sees it merged. No gh, no remote, a refused
   * push: blocked (merge_failed) with the reason, until a person fixes it and retries.
   */
  private async openPullRequest(epic: EpicRow): Promise<void> {
    const remote = this.config.remote ?? 'origin';
    try {
      await this.dropHandoff(epic);
      const body = await this.pullRequestBody(epic);
      const pr = await openPullRequest({
        mainRoot: this.mainRoot,
        epicId: epic.id,
        title: `${epic.title} (${epic.id})`,
        body,
        remote,
      });
      await this.store.setPullRequest(epic.id, pr.url, this.actor, { remote, base: pr.base, pushed: pr.pushed });
      this.log(
        `${epic.id}: pushed ${epicBranch(epic.id)} to ${remote} and opened ${pr.url}; done once it is merged there`,
      );
    } catch (err) {
      if (!(err instanceof PullRequestBlocked)) throw err;
      const t = await this.store.applyEpicEvent(epic.id, 'merge_failed', this.actor, `merge_failed: ${err.message}`, {
        remote,
      });
      this.log(`${epic.id}: ${t.from} → ${t.to}: ${err.message}; after fixing it: springfield epic retry ${epic.id}`);
    }
  }

  /** The handoff belongs to the epic's branch only (docs/lifecycle.md): it is taken out before the branch is offered for merging. */
  private async dropHandoff(epic: EpicRow): Promise<void> {
    const worktree = epic.worktree_path;
    if (!worktree || !existsSync(worktree)) return;
    const git = (args: readonly string[]) => gitOutAsync(worktree, args, process.env);
    const name = handoffFileName(epic.id);
    if ((await git(['ls-files', '--', name])).trim() === '') return;
    await git(['rm', '-q', '--', name]);
    await git([
      'commit',
      '-q',
      '--no-verify',
      '-m',
      `Leave the handoff out of the pull request for ${epic.id}`,
      '--trailer',
      `Springfield-Epic: ${epic.id}`,
      '--',
      name,
    ]);
  }

  private async pullRequestBody(epic: EpicRow): Promise<string> {
    const summary = renderSummary(await this.store.epicReport(epic.id));
    // The merge happens on GitHub, so the retrospective so far goes where reviewers read it (and into the event log once merged).
    const retro = renderRetrospective(await this.store.retrospective(epic.id));
    const commits = (
      await gitOutAsync(
        this.mainRoot,
        ['log', '--reverse', '--format=- %h %s', `HEAD..${epicBranch(epic.id)}`],
        process.env,
      )
    ).trim();
    return [
      summary.replace(/^# .*\n/m, '').trimEnd(),
      '',
      ...retro,
      '## Commits',
      '',
      commits || '- none',
      '',
      `Springfield-Epic: ${epic.id}`,
      '',
    ].join('\n');
  }

  /** PR mode: asks gh whether the pull request was merged; merged → done and the worktree removed; closed → blocked. */
  async checkPullRequest(epicId: string): Promise<void> {
    const epic = await this.store.getEpic(epicId);
    if (epic.status !== 'verified' || !epic.pr_url) return;
    const url = epic.pr_url;
    await this.store.markPullRequestChecked(epicId);
    let state;
    try {
      state = await pullRequestState(this.mainRoot, url);
    } catch (err) {
      this.log(`${epicId}: could not read ${url}: ${messageOf(err)} (asked again later)`);
      return;
    }
    if (state.state === 'MERGED') {
      await this.store.markMerged(
        epicId,
        this.actor,
        `pull request merged${state.mergedAt ? ` at ${state.mergedAt}` : ''}: ${url}`,
      );
      await this.closeWorktree(epic, `pull request ${url} merged`);
    } else if (state.state === 'CLOSED') {
      await this.store.applyEpicEvent(
        epicId,
        'merge_failed',
        this.actor,
        `merge_failed: pull request ${url} was closed without merging`,
      );
      this.log(`${epicId}: pull request ${url} was closed without merging; blocked until a person retries`);
    }
  }
}

/** The merge commit's account of a conflict met on the way: what was resolved how, and by whom. */
function resolvedBody(landed: Landed): string {
  const mechanical = describeResolutions(landed.resolutions).map((l) => `- ${l}`);
  if (landed.by === BUILDING_ROLE)
    return [
      `Conflict in ${landed.files.join(', ')} resolved by Ralph (one session).`,
      ...(mechanical.length ? ['Resolved mechanically:', ...mechanical] : []),
    ].join('\n');
  return ['Conflicts resolved mechanically:', ...mechanical].join('\n');
}
