import * as vscode from 'vscode';
import { type ReviewComment, UsageError } from '../../core/index.ts';
import { Disposable } from '../lifecycle.ts';
import { reviewFileOf } from './reviewUris.ts';

/**
 * A person's line comments on the branch side of a review's diff, one pending review per epic, shown
 * as comment threads until Request changes or Approve sends them (docs/extension.md, "Review changes").
 * Comments can be made only where `reviewable` says the epic takes a review (implemented or verified).
 */
export class ReviewThreads extends Disposable {
  private readonly controller = this.register(
    vscode.comments.createCommentController('springfield.review', 'Springfield review'),
  );
  private readonly pending = new Map<string, Set<vscode.CommentThread>>();

  private readonly ranges: vscode.CommentingRangeProvider;

  constructor(reviewable: (epicId: string) => boolean) {
    super();
    this.ranges = {
      provideCommentingRanges: (document) => {
        const f = reviewFileOf(document.uri);
        if (!f || f.side !== 'branch' || !reviewable(f.epicId)) return [];
        return [new vscode.Range(0, 0, Math.max(0, document.lineCount - 1), 0)];
      },
    };
    this.controller.commentingRangeProvider = this.ranges;
    this.controller.options = {
      prompt: 'Comment for Ralph',
      placeHolder: 'What should change here? Add it to your review, then Request changes or Approve',
    };
    this.register({ dispose: () => this.pending.forEach((threads) => threads.forEach((t) => t.dispose())) });
  }

  /**
   * VS Code asks where comments may go when a document opens, not when the answer changes: setting
   * the provider again makes it ask every open editor anew (an epic became reviewable, or stopped being).
   */
  rangesChanged(): void {
    this.controller.commentingRangeProvider = this.ranges;
  }

  /** The epic whose review a thread belongs to. */
  epicOf(thread: vscode.CommentThread): string | undefined {
    return reviewFileOf(thread.uri)?.epicId;
  }

  /** Adds the typed text to its thread, which joins the epic's pending review; returns the epic. */
  add(reply: vscode.CommentReply): string {
    const epicId = this.epicOf(reply.thread);
    const text = reply.text.trim();
    if (!epicId) throw new UsageError('bad_location', 'comments for a review go on the right-hand side of its diff');
    if (text === '') throw new UsageError('missing_value', 'type a comment first');
    const thread = reply.thread;
    thread.comments = [
      ...thread.comments,
      {
        body: text,
        mode: vscode.CommentMode.Preview,
        author: { name: 'You' },
        label: 'pending',
        contextValue: 'draft',
      },
    ];
    thread.label = `Your pending review of ${epicId}`;
    thread.contextValue = 'pending';
    thread.canReply = true;
    thread.collapsibleState = vscode.CommentThreadCollapsibleState.Expanded;
    const threads = this.pending.get(epicId) ?? new Set<vscode.CommentThread>();
    threads.add(thread);
    this.pending.set(epicId, threads);
    return epicId;
  }

  /** The epic's pending comments, one per thread (a thread's comments joined), at the lines each covers. */
  commentsOf(epicId: string): ReviewComment[] {
    return [...(this.pending.get(epicId) ?? [])].flatMap((thread) => {
      const f = reviewFileOf(thread.uri);
      const text = thread.comments
        .map((c) => (typeof c.body === 'string' ? c.body : c.body.value))
        .join('\n\n')
        .trim();
      if (!f || !thread.range || text === '') return [];
      const line = thread.range.start.line + 1;
      const end = thread.range.end.line + 1;
      return [{ file: f.path, line, endLine: end > line ? end : null, text }];
    });
  }

  /** Epics with comments waiting to be sent. */
  epicsPending(): string[] {
    return [...this.pending].filter(([, threads]) => threads.size > 0).map(([id]) => id);
  }

  /** Drops one thread from its review. */
  discard(thread: vscode.CommentThread): void {
    const epicId = this.epicOf(thread);
    if (epicId) this.pending.get(epicId)?.delete(thread);
    thread.dispose();
  }

  /** The review was sent: its threads go (the signal's own threads show what was recorded). */
  clear(epicId: string): void {
    for (const thread of this.pending.get(epicId) ?? []) thread.dispose();
    this.pending.delete(epicId);
  }
}
