import * as vscode from 'vscode';

/** The scheme of both sides of a review's diff: a file's text at one commit, read-only (reviewDocuments.ts). */
export const REVIEW_SCHEME = 'springfield-review';

/** What a review document is: a file of an epic's diff at its base (left) or its branch's tip (right). */
export interface ReviewFile {
  readonly epicId: string;
  readonly side: 'base' | 'branch';
  readonly commit: string;
  /** Repository-relative, forward slashes. */
  readonly path: string;
}

/** `springfield-review:/src/a.ts?epic=sf-a3f8&side=branch&commit=<hash>`: the path keeps the file's name and language. */
export function reviewUri(f: ReviewFile): vscode.Uri {
  const query = new URLSearchParams({ epic: f.epicId, side: f.side, commit: f.commit }).toString();
  return vscode.Uri.from({ scheme: REVIEW_SCHEME, path: `/${f.path}`, query });
}

/** The review file a URI names, or undefined for any other document. */
export function reviewFileOf(uri: vscode.Uri): ReviewFile | undefined {
  if (uri.scheme !== REVIEW_SCHEME) return undefined;
  const q = new URLSearchParams(uri.query);
  const epicId = q.get('epic');
  const side = q.get('side');
  const commit = q.get('commit');
  if (!epicId || (side !== 'base' && side !== 'branch') || !commit || !/^[0-9a-f]{40}([0-9a-f]{24})?$/.test(commit))
    return undefined;
  return { epicId, side, commit, path: uri.path.replace(/^\//, '') };
}
