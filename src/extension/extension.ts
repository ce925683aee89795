import type * as vscode from 'vscode';
import { SpringfieldExtension } from './springfield.ts';

/** Springfield's entry point: one object that owns everything, disposed with the extension. */
export async function activate(context: vscode.ExtensionContext): Promise<SpringfieldExtension> {
  const extension = new SpringfieldExtension(context);
  context.subscriptions.push(extension);
  await extension.activate();
  return extension;
}

export function deactivate(): void {
  // everything is disposed through context.subscriptions
}
