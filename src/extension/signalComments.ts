import * as vscode from 'vscode';
import { Disposable } from './lifecycle.ts';
import type { Snapshot } from './model/snapshot.ts';
import { PERSON_REVIEWER } from '../core/index.ts';
import { holderName, ROLE_NAMES, signalCommentBody, signalWords } from './views/viewText.ts';
import { signalFilePath } from './model/epicFacts.ts';

/** Bart's signals inline: a comment thread at each signal location, with the decision actions in its title. */
export class SignalComments extends Disposable {
  private readonly controller = this.register(
    vscode.comments.createCommentController('springfield.signals', 'Springfield review signals'),
  );
  private readonly threads = new Map<string, vscode.CommentThread>();
  private readonly signalOf = new WeakMap<vscode.CommentThread, number>();
  private readonly root: () => string | undefined;

  constructor(root: () => string | undefined) {
    super();
    this.root = root;
    this.register({ dispose: () => this.threads.forEach((t) => t.dispose()) });
    // The box under a waiting thread takes an optional note; the buttons beside it decide.
    this.controller.options = {
      prompt: 'Add a note (optional)',
      placeHolder: 'A note for whoever picks this up (optional), then choose below',
    };
  }

  signalIdOf(thread: vscode.CommentThread): number | undefined {
    return this.signalOf.get(thread);
  }

  /** Shows signals that wait for a person, and failures the epic is still working through. */
  update(s: Snapshot): void {
    const root = this.root();
    if (!root) return;
    const active = new Set(
      s.epics.filter((e) => e.status !== 'done' && e.status !== 'verified' && e.status !== 'deferred').map((e) => e.id),
    );
    const wanted = new Map<
      string,
      { sig: Snapshot['signals'][number]; loc: Snapshot['signals'][number]['locations'][number]; path: string }
    >();
    for (const sig of s.signals) {
      if (sig.type === 'pass' && sig.status !== 'awaiting_person') continue;
      if (sig.status !== 'awaiting_person' && !active.has(sig.epic_id)) continue;
      const epic = s.epics.find((e) => e.id === sig.epic_id);
      // In the epic's worktree (its changes at those lines), so the key moves the thread when the worktree comes or goes.
      sig.locations.forEach((loc, i) => {
        const path = signalFilePath(epic, loc.file, root);
        wanted.set(`${sig.id}:${i}:${sig.status}:${path}`, { sig, loc, path });
      });
    }
    for (const [key, thread] of this.threads) {
      if (!wanted.has(key)) {
        thread.dispose();
        this.threads.delete(key);
      }
    }
    for (const [key, { sig, loc, path }] of wanted) {
      if (this.threads.has(key)) continue;
      const start = Math.max(0, loc.line - 1);
      const range = new vscode.Range(start, 0, Math.max(start, (loc.end_line ?? loc.line) - 1), 0);
      const body = new vscode.MarkdownString(
        signalCommentBody(sig, loc, sig.resolved_by ? holderName(sig.resolved_by, null, root) : null),
      );
      const thread = this.controller.createCommentThread(vscode.Uri.file(path), range, [
        {
          body,
          mode: vscode.CommentMode.Preview,
          author: { name: authorOf(sig.created_by, root) },
          timestamp: new Date(sig.created_at),
        },
      ]);
      thread.label = `${signalWords(sig)} · ${s.epics.find((e) => e.id === sig.epic_id)?.title ?? sig.epic_id}: ${sig.summary}`;
      thread.contextValue = sig.status === 'awaiting_person' ? 'awaiting' : sig.status;
      const open = sig.status === 'awaiting_person';
      thread.canReply = open;
      thread.state = open ? vscode.CommentThreadState.Unresolved : vscode.CommentThreadState.Resolved;
      thread.collapsibleState = open
        ? vscode.CommentThreadCollapsibleState.Expanded
        : vscode.CommentThreadCollapsibleState.Collapsed;
      this.signalOf.set(thread, sig.id);
      this.threads.set(key, thread);
    }
  }
}

/** Who recorded a signal, as its thread shows it: Bart (with his agent id), or the person whose review it was (src/core/review). */
function authorOf(createdBy: string | null, root: string): string {
  if (!createdBy) return 'Bart';
  const who = holderName(createdBy, null, root);
  if (/^bart\b/i.test(who)) return `Bart (${who})`;
  return `${who === PERSON_REVIEWER ? (ROLE_NAMES.marge ?? who) : who} (a person's review)`;
}
