import * as vscode from 'vscode';
import { SpringfieldError } from '../../core/index.ts';
import { messageOf } from '../../shared/errorMessage.ts';

/** Wraps a command handler: domain refusals become one clear message, never a stack trace. */
export function guarded<A extends unknown[]>(
  fn: (...args: A) => Promise<unknown> | unknown,
): (...args: A) => Promise<void> {
  return async (...args: A) => {
    try {
      await fn(...args);
    } catch (err) {
      if (err instanceof SpringfieldError) {
        const show = err.category === 'refused' ? vscode.window.showWarningMessage : vscode.window.showErrorMessage;
        void show(`Springfield: ${err.message}`);
      } else {
        void vscode.window.showErrorMessage(`Springfield: ${messageOf(err)}`);
      }
    }
  };
}
