import * as vscode from 'vscode';
import { Disposable } from './lifecycle.ts';
import { reportPass, sentence, type SchedulerPass } from './model/schedulerReport.ts';
import type { EditorScheduler } from './editorScheduler.ts';
import { md } from './views/viewText.ts';

const CONFIGURE = 'Configure agents…';

/**
 * Shows whether the scheduler runs in this window (a context key that puts Start or Stop in the
 * Agents view's title, the view's description, a status bar item) and says after Start and Run
 * once what was started, or why nothing was, offering Configure agents… when a role has no agent.
 */
export class SchedulerStatus extends Disposable {
  private readonly item = this.register(
    vscode.window.createStatusBarItem('springfield.scheduler', vscode.StatusBarAlignment.Left, 49),
  );
  private readonly view: vscode.TreeView<unknown>;
  private running = false;
  private readonly name: (epicId: string) => string;

  /** `name`: an epic as the person knows it (its title). */
  constructor(scheduler: EditorScheduler, agentsView: vscode.TreeView<unknown>, name: (epicId: string) => string) {
    super();
    this.name = name;
    this.view = agentsView;
    this.item.name = 'Springfield scheduler';
    this.item.command = 'springfield.agents.focus';
    this.register(scheduler.onDidChangeRunning((running) => this.setRunning(running)));
    this.register(scheduler.onDidPass((pass) => this.onPass(pass)));
    this.setRunning(false);
  }

  private setRunning(running: boolean): void {
    this.running = running;
    void vscode.commands.executeCommand('setContext', 'springfield.schedulerRunning', running);
    // Until its first pass ends, the Agents view says it is starting, not that it started no agent.
    void vscode.commands.executeCommand('setContext', 'springfield.schedulerPassed', false);
    this.view.description = running ? 'scheduler running' : undefined;
    if (!running) {
      this.item.hide();
      return;
    }
    this.item.text = '$(run-all) Scheduler running';
    this.item.tooltip =
      'Springfield: the scheduler runs in this window and starts agents as work becomes ready. Stop it in the Agents view.';
    this.item.show();
  }

  private onPass(pass: SchedulerPass): void {
    const report = reportPass(pass, this.name);
    if (this.running) void vscode.commands.executeCommand('setContext', 'springfield.schedulerPassed', true);
    if (this.running)
      this.item.tooltip = new vscode.MarkdownString(
        `**Springfield scheduler running**\n\nLast pass: ${md(report.message)}${pass.parallel ? `\n\nAgents: ${md(pass.parallel)}` : ''}\n\nStop it in the Agents view.`,
      );
    if (pass.kind === 'loop') return;
    const lead = pass.kind === 'start' ? 'Springfield scheduler running.' : 'Springfield:';
    // Run scheduler once was asked for: its answer stays until read, whatever it did.
    if (report.acted && pass.kind === 'start') {
      void vscode.window.setStatusBarMessage(`${lead} ${sentence(report.message)}`, 5000);
      return;
    }
    const buttons = report.configure ? [CONFIGURE] : [];
    void vscode.window.showInformationMessage(`${lead} ${report.message}`, ...buttons).then((choice) => {
      if (choice === CONFIGURE) void vscode.commands.executeCommand('springfield.agents.configure');
    });
  }
}
