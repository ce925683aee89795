import * as vscode from 'vscode';
import {
  allowConfig,
  RefusedError,
  shellQuote,
  trackedPath,
  trustStatus,
  type TrustStatus,
  trustTargetFor,
} from '../core/index.ts';
import type { StoreHost } from './storeHost.ts';

/** Contents the person declined in this window: the scheduler starting by itself does not ask about them again. */
const declined = new Set<string>();

/**
 * Before the scheduler starts: when the repository's .springfield/config.json (as it is now) was not
 * allowed, a modal shows what it would run and asks, Allow or Cancel. Allow is recorded in the user's
 * own state, where `springfield allow` records it, so either counts for both (docs/trust.md).
 * `asked`: a person asked for the scheduler (ask even if they declined this content before).
 */
export async function confirmRepositoryConfig(host: StoreHost, asked: boolean): Promise<void> {
  if (!host.location || !host.dbPath) return;
  const target = trustTargetFor(host.location, host.dbPath, process.env);
  // A tracked state.db is refused whatever the config says (the scheduler says so): no question first.
  if (trackedPath(target.mainRoot, target.dbPath, target.env)) return;
  const status = trustStatus(target);
  if (status.allowed || status.hash === null) return;
  if (!asked && declined.has(status.hash)) throw notAllowed(status);
  const choice = await vscode.window.showWarningMessage(
    status.state === 'changed'
      ? "This repository's Springfield config changed since you allowed it. Allow it to run these commands?"
      : "This repository's Springfield config wants to run commands. Allow them?",
    { modal: true, detail: detail(status) },
    'Allow',
  );
  if (choice !== 'Allow') {
    declined.add(status.hash);
    throw notAllowed(status);
  }
  allowConfig(target, status.hash);
}

function detail(s: TrustStatus): string {
  const commands = s.commands.map((c) => `${c.key}: ${c.argv.map(shellQuote).join(' ')}`);
  return [
    `${s.config_path}`,
    '',
    ...(commands.length ? commands : ['(no commands)']),
    '',
    `Allowed for this exact content (sha256 ${s.hash?.slice(0, 16)}…); Springfield asks again when the file changes. The decision is kept in ${s.record_file}, as 'springfield allow' keeps it.`,
  ].join('\n');
}

function notAllowed(s: TrustStatus): RefusedError {
  return new RefusedError(
    'config_not_allowed',
    `the scheduler did not start: ${s.config_path} is not allowed to run commands (allow it here, or with 'springfield allow')`,
  );
}
