import { existsSync } from 'node:fs';
import { join } from 'node:path';
import * as vscode from 'vscode';
import {
  approveWithHandoff,
  describeDrift,
  handoffCopyPath,
  handoffFileName,
  holderName,
  isCostBlockReason,
  parsePlan,
  type PlanStructure,
} from '../../core/index.ts';
import type { ApprovalData, FromWebview } from '../../protocol/messages.ts';
import type { StoreHost } from '../storeHost.ts';
import { PanelHost } from './panelHost.ts';
import { messageOf } from '../../shared/errorMessage.ts';

/** Starts an approved epic (and claims its first step when asked); returns what happened, line by line. */
export type StartEpic = (epicId: string, claim: boolean) => Promise<string[]>;

/**
 * The plan-approval panel: rendered plan, changes since the previous version, Approve / Request
 * changes / Discard; once approved, Start epic and Start and claim the first step.
 */
export class ApprovalPanel extends PanelHost {
  static readonly viewType = 'springfield.approval';
  readonly epicId: string;
  private readonly host: StoreHost;
  private readonly start: StartEpic;

  constructor(panel: vscode.WebviewPanel, extensionUri: vscode.Uri, host: StoreHost, epicId: string, start: StartEpic) {
    super(panel, extensionUri, 'approval');
    this.host = host;
    this.epicId = epicId;
    this.start = start;
    this.register(host.onDidChange(() => void this.send()));
  }

  reveal(): void {
    this.panel.reveal();
  }

  protected onReady(): void {
    void this.send();
  }

  async send(): Promise<void> {
    try {
      this.post({ type: 'approval', data: await approvalData(this.host, this.epicId) });
    } catch (err) {
      this.post({ type: 'result', requestId: 0, ok: false, message: messageOf(err), lines: [] });
    }
  }

  protected async handle(message: Exclude<FromWebview, { type: 'ready' }>): Promise<void> {
    if (message.type !== 'decide' && message.type !== 'act') return;
    if (message.epicId !== this.epicId) {
      this.post({
        type: 'result',
        requestId: message.requestId,
        ok: false,
        message: `this panel reviews ${this.epicId}, not ${message.epicId}`,
        lines: [],
      });
      return;
    }
    if (message.type === 'act' && message.action === 'openHandoff') {
      await vscode.window.showTextDocument(vscode.Uri.file(handoffPath(this.host, this.epicId)));
      return;
    }
    try {
      const version = message.type === 'decide' ? message.version : undefined;
      const lines =
        message.type === 'decide'
          ? await this.decide(message)
          : await this.start(this.epicId, message.action === 'startAndClaim');
      const epicStatus = (await this.host.writable().getEpic(this.epicId)).status;
      if (lines)
        this.post({
          type: 'result',
          requestId: message.requestId,
          ok: true,
          message: lines[0] ?? 'Done',
          lines: lines.slice(1),
          version,
          epicStatus,
        });
      else
        this.post({
          type: 'result',
          requestId: message.requestId,
          ok: false,
          message: 'Cancelled',
          lines: [],
          version,
        });
    } catch (err) {
      const text = messageOf(err);
      this.post({ type: 'result', requestId: message.requestId, ok: false, message: text, lines: [] });
    }
    await this.host.refresh();
  }

  private async decide(m: Extract<FromWebview, { type: 'decide' }>): Promise<string[] | undefined> {
    const store = this.host.writable();
    const actor = this.host.actor;
    if (m.decision === 'approve') {
      // The stored proposal is approved, whichever worktree this window shows (docs/lifecycle.md).
      const r = await approveWithHandoff(
        store,
        this.epicId,
        null,
        actor,
        this.host.dbPath ?? join(actor.worktree, '.springfield', 'state.db'),
        m.version,
      );
      return [
        `Approved version ${r.version}: ${r.epic_id} is ${r.transition.to.replace(/_/g, ' ')}`,
        `${r.init.steps_created} steps and ${r.init.checklist_items_created} checklist items created${r.init.reinitialized ? ` (${r.init.steps_kept_completed} completed steps kept)` : ''}.`,
        `The handoff for the builders (${handoffFileName(r.epic_id)}) ${r.handoff_written ? 'is ready' : 'was not rendered'}; it is committed on the epic's branch when the epic starts.`,
      ];
    }
    if (m.decision === 'requestChanges') {
      const feedback = m.feedback?.trim() ?? '';
      if (!feedback) throw new Error('Write feedback for Lisa before requesting changes');
      const r = await store.requestChanges(this.epicId, feedback, actor, m.version);
      const byLisa = (await store.getEpic(this.epicId)).planner !== 'person';
      return [
        `Requested changes to version ${r.version}`,
        byLisa
          ? 'Lisa sees your feedback on her next run; her new version shows here.'
          : 'The feedback is kept with this version; propose the next one (Propose plan…) and it shows here.',
      ];
    }
    const ok = await vscode.window.showWarningMessage(
      `Discard version ${m.version} of ${this.epicId}'s plan?`,
      { modal: true },
      'Discard',
    );
    if (ok !== 'Discard') return undefined;
    const r = await store.discardPlan(this.epicId, actor, m.version, m.feedback?.trim() || null);
    return [`Discarded version ${r.version}`];
  }
}

/** Builds what the approval view shows from the store: the latest version, rendered, and its changes. */
export async function approvalData(host: StoreHost, epicId: string): Promise<ApprovalData> {
  const store = host.writable();
  const epic = await store.getEpic(epicId);
  const versions = await store.planVersions(epicId);
  const current = versions.filter((v) => v.status === 'proposed').at(-1) ?? versions.at(-1);
  const previous = current ? versions.filter((v) => v.version < current.version).at(-1) : undefined;
  const plan = current ? parsePlan(current.body, current.plan_path) : undefined;
  // Once approved, the plan lives in the store: steps and items show as they are now, not as the text was written.
  const live = current?.status === 'approved' ? host.snapshot?.plans.find((p) => p.epic_id === epicId) : undefined;
  const stored = new Map((live?.steps ?? []).flatMap((s) => [s, ...s.substeps]).map((s) => [s.anchor, s]));
  return {
    epic: {
      id: epic.id,
      title: epic.title,
      status: epic.status,
      complexity: epic.complexity,
      planner: epic.planner,
      paused:
        epic.status === 'blocked' && isCostBlockReason(epic.status_reason)
          ? (epic.status_reason ?? '').replace(/^budget_exhausted: /, '')
          : null,
    },
    version:
      current && plan
        ? {
            version: current.version,
            of: versions.length,
            status: current.status,
            planPath: current.plan_path,
            proposedBy:
              current.proposed_agent || current.proposed_by
                ? holderName(current.proposed_by, current.proposed_agent, host.actor.worktree)
                : null,
            createdAt: current.created_at,
            title: plan.title,
            sections: plan.sections,
            steps: plan.steps.map((s) => {
              const st = stored.get(s.anchor);
              const items = s.items.map((i) => {
                const item = st?.items.find((x) => x.kind === i.kind && x.ordinal === i.ordinal);
                return { kind: i.kind, text: i.text, checked: item ? item.status === 'completed' : i.checked };
              });
              return {
                anchor: s.anchor,
                number: s.number,
                title: s.title,
                parent: s.parentAnchor,
                dependsOn: s.dependsOn,
                items,
                ...(st ? { status: st.status } : {}),
              };
            }),
          }
        : null,
    changes:
      current && previous
        ? describeDrift(JSON.parse(previous.structure) as PlanStructure, JSON.parse(current.structure) as PlanStructure)
        : [],
    previousVersion: previous?.version ?? null,
    feedbackHistory: versions
      .filter((v) => v.feedback)
      .map((v) => ({ version: v.version, feedback: v.feedback as string })),
    handoff: existsSync(handoffPath(host, epicId)) ? handoffFileName(epicId) : null,
    progress: live ? { done: live.progress.steps_completed, total: live.progress.steps_total } : null,
  };
}

/** Where approval keeps its copy of the handoff (see approveWithHandoff). */
function handoffPath(host: StoreHost, epicId: string): string {
  return handoffCopyPath(host.dbPath ?? join(host.actor.worktree, '.springfield', 'state.db'), epicId);
}
