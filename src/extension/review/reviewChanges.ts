import * as vscode from 'vscode';
import { epicChanges, type EpicRow, submitReview, UsageError } from '../../core/index.ts';
import type { CommandContext } from '../commands/commandContext.ts';
import { guarded } from '../commands/guard.ts';
import { hasAgent } from '../commands/signalCommands.ts';
import { Disposable } from '../lifecycle.ts';
import { statusWord } from '../views/viewText.ts';
import type { Row } from '../views/treeProvider.ts';
import { registerReviewDocuments } from './reviewDocuments.ts';
import { ReviewThreads } from './reviewThreads.ts';
import { reviewUri } from './reviewUris.ts';
import { BUILDING_ROLE } from '../../shared/roles.ts';

/** What a review command was invoked on: an epic or run row, a comment thread or its reply box, an epic id, or nothing (the palette). */
type Target = Row | vscode.CommentThread | vscode.CommentReply | string | undefined;

const REVIEWABLE = new Set(['implemented', 'verified']);

/**
 * Review changes (docs/extension.md): an epic's branch against its base in the multi-file diff
 * editor, the person's line comments on the branch side as one pending review, then Request changes
 * (Ralph goes back with every comment) or Approve, recorded through core's submitReview.
 */
export class ReviewChanges extends Disposable {
  private readonly ctx: CommandContext;
  private readonly threads: ReviewThreads;

  constructor(ctx: CommandContext) {
    super();
    this.ctx = ctx;
    this.threads = this.register(new ReviewThreads((id) => REVIEWABLE.has(this.epic(id)?.status ?? '')));
    // An open review takes comments from the moment its epic is built, and none once it is sent back.
    let reviewable = '';
    this.register(
      ctx.host.onDidChange((s) => {
        const now = s.epics
          .filter((e) => REVIEWABLE.has(e.status))
          .map((e) => e.id)
          .join(' ');
        if (now === reviewable) return;
        reviewable = now;
        this.threads.rangesChanged();
      }),
    );
    this.register(registerReviewDocuments(() => this.repository()));
    const commands: Record<string, (target?: Target) => Promise<void>> = {
      'springfield.review.open': (t) => this.open(t),
      'springfield.review.addComment': (t) => this.addComment(t),
      'springfield.review.requestChanges': (t) => this.requestChanges(t),
      'springfield.review.approve': (t) => this.approve(t),
      'springfield.review.discardComment': (t) => this.discard(t),
    };
    for (const [id, fn] of Object.entries(commands)) this.register(vscode.commands.registerCommand(id, guarded(fn)));
  }

  /** Opens the epic's changes against its base: read-only base on the left, the branch's tip on the right. */
  private async open(target: Target): Promise<void> {
    const epicId = this.epicOfTarget(target) ?? (await this.pick('Review changes', (e) => REVIEWABLE.has(e.status)));
    if (!epicId) return;
    const changes = await epicChanges(this.requireRepository(), epicId, process.env);
    const epic = this.epic(epicId);
    if (changes.files.length === 0) {
      void vscode.window.showInformationMessage(
        `${epicId}'s branch ${changes.branch} changes no file against its base: nothing to review.`,
      );
      return;
    }
    const resources = changes.files.map((f) => {
      const left =
        f.status === 'A' ? undefined : reviewUri({ epicId, side: 'base', commit: changes.base, path: f.path });
      const right =
        f.status === 'D' ? undefined : reviewUri({ epicId, side: 'branch', commit: changes.tip, path: f.path });
      return [(right ?? left) as vscode.Uri, left, right] as const;
    });
    await vscode.commands.executeCommand(
      'vscode.changes',
      `Review ${epicId}${epic ? ` · ${epic.title}` : ''}`,
      resources,
    );
    const files = `${changes.files.length} file${changes.files.length === 1 ? '' : 's'}`;
    if (!REVIEWABLE.has(epic?.status ?? '')) {
      void vscode.window.showInformationMessage(
        `${epicId} is ${statusWord(epic?.status ?? 'unknown')}: you can read its ${files}; comments and Request changes open once it is implemented or verified.`,
      );
      return;
    }
    void vscode.window
      .showInformationMessage(
        `Reviewing ${epicId}: ${files} against ${changes.base.slice(0, 7)}. Click + beside a line on the right (its branch) to comment; then Request changes or Approve.`,
        'Request changes…',
        'Approve…',
      )
      .then((choice) => {
        if (choice === 'Request changes…') void guarded(() => this.requestChanges(epicId))();
        else if (choice === 'Approve…') void guarded(() => this.approve(epicId))();
      });
  }

  private async addComment(target: Target): Promise<void> {
    if (!isReply(target))
      throw new UsageError('missing_value', 'type a comment on the right-hand side of a review first');
    this.threads.add(target);
  }

  private async discard(target: Target): Promise<void> {
    const thread = isReply(target) ? target.thread : isThread(target) ? target : undefined;
    if (thread) this.threads.discard(thread);
  }

  /** Sends Ralph back with every pending comment of the epic (and the text in the reply box, if any). */
  private async requestChanges(target: Target): Promise<void> {
    const epicId = this.epicOfTarget(target) ?? (await this.pickForDecision('Request changes'));
    if (!epicId) return;
    if (isReply(target) && target.text.trim()) this.threads.add(target);
    const comments = this.threads.commentsOf(epicId);
    const n = comments.length;
    const summary = await vscode.window.showInputBox({
      title: `Request changes on ${epicId}`,
      prompt: n
        ? `Ralph goes back with your ${n} comment${n === 1 ? '' : 's'}. The review in one sentence (optional):`
        : 'You made no line comment: say what Ralph should change.',
      validateInput: (v) => (n > 0 || v.trim() ? undefined : 'Say what should change, or add a line comment first'),
    });
    if (summary === undefined) return;
    const r = await submitReview(this.ctx.host.writable(), this.requireRepository(), process.env, {
      epicId,
      decision: 'request_changes',
      comments,
      summary: summary.trim() || null,
      actor: this.ctx.host.actor,
    });
    this.threads.clear(epicId);
    await this.ctx.host.refresh();
    const t = r.transition;
    if (t?.to === 'blocked') {
      void vscode.window.showWarningMessage(
        `Your review of ${epicId} is recorded, but it is blocked: ${t.reason ?? 'no build iteration left'}.`,
      );
      return;
    }
    const hint = hasAgent(this.ctx, BUILDING_ROLE)
      ? ''
      : ' No agent is configured for Ralph, so nothing picks this up by itself: configure one, or do it yourself.';
    void vscode.window.showInformationMessage(
      `Sent ${epicId} back to Ralph with ${n ? `your ${n} comment${n === 1 ? '' : 's'}` : 'your review'}: it is now in progress (build iteration ${t?.iteration ?? '?'}).${hint}`,
    );
  }

  /** The epic passes review (and, for a critical epic, its merge is approved); pending comments go with it as notes. */
  private async approve(target: Target): Promise<void> {
    const epicId = this.epicOfTarget(target) ?? (await this.pickForDecision('Approve'));
    if (!epicId) return;
    if (isReply(target) && target.text.trim()) this.threads.add(target);
    const comments = this.threads.commentsOf(epicId);
    const epic = this.epic(epicId);
    const critical = epic?.complexity === 'critical';
    const what =
      epic?.status === 'verified'
        ? 'It already passed review: this approves its merge.'
        : `It passes review and goes on to be merged${critical ? '; as a critical epic, this is also its merge approval' : ''}.`;
    const notes =
      comments.length === 1
        ? ' Your comment goes with it as a note.'
        : comments.length > 1
          ? ` Your ${comments.length} comments go with it as notes.`
          : '';
    const ok = await vscode.window.showWarningMessage(
      `Approve ${epicId}?`,
      { modal: true, detail: `${what}${notes}` },
      'Approve',
    );
    if (ok !== 'Approve') return;
    const r = await submitReview(this.ctx.host.writable(), this.requireRepository(), process.env, {
      epicId,
      decision: 'approve',
      comments,
      summary: null,
      actor: this.ctx.host.actor,
    });
    this.threads.clear(epicId);
    await this.ctx.host.refresh();
    const now = r.transition ? ` it is now ${statusWord(r.transition.to)}` : '';
    void vscode.window.showInformationMessage(
      `Approved ${epicId}:${now}${r.merge_approved ? `${now ? ' and' : ''} its merge is approved` : ''}.`,
    );
  }

  private epic(id: string): EpicRow | undefined {
    return this.ctx.host.snapshot?.epics.find((e) => e.id === id);
  }

  /** The epic behind an epic row, a run row, a comment thread or reply, or an id. */
  private epicOfTarget(target: Target): string | undefined {
    if (typeof target === 'string') return target;
    if (isReply(target)) return this.threads.epicOf(target.thread);
    if (isThread(target)) return this.threads.epicOf(target);
    if (!target) return undefined;
    const run = /^run:(\d+)$/.exec(target.id);
    if (run) return this.ctx.host.snapshot?.runs.find((r) => r.id === Number(run[1]))?.epic_id ?? undefined;
    return this.ctx.epics.node(target)?.ref.epicId;
  }

  /** For a decision from the palette: the epics with pending comments first, then those waiting for review. */
  private async pickForDecision(title: string): Promise<string | undefined> {
    const pending = new Set(this.threads.epicsPending());
    return this.pick(title, (e) => pending.has(e.id) || REVIEWABLE.has(e.status), pending);
  }

  private async pick(
    title: string,
    include: (e: EpicRow) => boolean,
    pending = new Set<string>(),
  ): Promise<string | undefined> {
    const epics = (this.ctx.host.snapshot?.epics ?? [])
      .filter(include)
      .sort((a, b) => Number(pending.has(b.id)) - Number(pending.has(a.id)));
    if (epics.length === 0) {
      void vscode.window.showInformationMessage(
        'No epic waits for a review: an epic can be reviewed once it is implemented or verified.',
      );
      return undefined;
    }
    if (epics.length === 1) return epics[0]?.id;
    const item = await vscode.window.showQuickPick(
      epics.map((e) => ({
        label: `${e.id}  ${e.title}`,
        description: `${statusWord(e.status)}${pending.has(e.id) ? ' · your comments are pending' : ''}`,
        id: e.id,
      })),
      { title, placeHolder: 'Which epic?' },
    );
    return item?.id;
  }

  /** Where git runs for a review: the main worktree (else the common dir of a bare repository). */
  private repository(): string | undefined {
    const l = this.ctx.host.location;
    return l ? (l.mainRoot ?? l.commonDir) : undefined;
  }

  private requireRepository(): string {
    const root = this.repository();
    if (!root) throw new UsageError('no_repo', 'Springfield needs a folder inside a git repository');
    return root;
  }
}

function isReply(t: Target): t is vscode.CommentReply {
  return typeof t === 'object' && t !== null && 'thread' in t && 'text' in t;
}

function isThread(t: Target): t is vscode.CommentThread {
  return typeof t === 'object' && t !== null && 'uri' in t && 'comments' in t;
}
