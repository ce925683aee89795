import * as vscode from 'vscode';
import { fileAtCommit } from '../../core/index.ts';
import { REVIEW_SCHEME, reviewFileOf } from './reviewUris.ts';

/**
 * Serves both sides of a review's diff read-only: `git cat-file blob <commit>:<path>` in the
 * repository (core/git), so the person reads exactly the base and the branch tip they review, not a
 * worktree someone may be editing.
 */
export function registerReviewDocuments(repository: () => string | undefined): vscode.Disposable {
  return vscode.workspace.registerTextDocumentContentProvider(REVIEW_SCHEME, {
    async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
      const f = reviewFileOf(uri);
      const root = repository();
      if (!f || !root) return '';
      return (await fileAtCommit(root, f.commit, f.path, process.env)) ?? '';
    },
  });
}
