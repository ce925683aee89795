import { relative, isAbsolute } from 'node:path';

/**
 * Agent CLIs started by a preset print JSON events (so their usage can be read); a person watching
 * the run's terminal or reading its log wants what the agent does. This turns each event line into
 * a few readable lines: the commands and tools it runs, a short piece of their output, what it says,
 * and what the session cost. Lines that are not JSON pass through as they are; events of no
 * interest to a person are dropped. The run's usage and failure headline are read from the raw
 * output, never from this (docs/agents.md, "What a terminal shows").
 */
export type AgentOutputFormat = 'claude' | 'codex' | 'copilot';

/** The format a preset's output is in, by preset id; other agents' output is shown as it is. */
export function agentOutputFormat(presetId: string | undefined): AgentOutputFormat | null {
  return presetId === 'claude' || presetId === 'codex' || presetId === 'copilot' ? presetId : null;
}

type Json = Record<string, unknown>;

const RESULT_LINES = 4;
const LINE_CHARS = 160;

/** Readable lines for one output line of `format`, run in `cwd` (paths are shown relative to it). Empty: nothing to show. */
export function renderAgentLine(format: AgentOutputFormat, line: string, cwd: string): string[] {
  const trimmed = line.trim();
  if (!trimmed.startsWith('{')) return [line];
  let event: Json;
  try {
    event = JSON.parse(trimmed) as Json;
  } catch {
    return [line];
  }
  if (event === null || typeof event !== 'object' || Array.isArray(event)) return [line];
  switch (format) {
    case 'claude':
      return claude(event, cwd);
    case 'codex':
      return codex(event, cwd);
    case 'copilot':
      return copilot(event, cwd);
  }
}

function claude(e: Json, cwd: string): string[] {
  if (e.type === 'system' && e.subtype === 'init')
    return [`● Claude Code · model ${str(e.model) ?? '?'} · ${str(e.cwd) ?? cwd}`];
  if (e.type === 'system' && e.subtype === 'api_retry') return ['… the model API did not answer; Claude Code retries'];
  if (e.type === 'assistant') {
    const out: string[] = [];
    for (const c of contentOf(e)) {
      if (c.type === 'text' && str(c.text)?.trim()) out.push(...clip(str(c.text) ?? '', 20));
      else if (c.type === 'tool_use') out.push(`▸ ${str(c.name) ?? 'tool'}  ${toolInput(obj(c.input), cwd)}`);
    }
    return out;
  }
  if (e.type === 'user') {
    const out: string[] = [];
    for (const c of contentOf(e)) {
      if (c.type !== 'tool_result') continue;
      const text =
        typeof c.content === 'string'
          ? c.content
          : Array.isArray(c.content)
            ? c.content.map((p) => str(obj(p).text) ?? '').join('\n')
            : '';
      out.push(...indent(clip(text, RESULT_LINES), c.is_error === true ? '  ✗ ' : '    '));
    }
    return out;
  }
  if (e.type === 'result') {
    const usage = obj(e.usage);
    const turns = typeof e.num_turns === 'number' ? `${e.num_turns} turns · ` : '';
    const cost = typeof e.total_cost_usd === 'number' ? ` · $${e.total_cost_usd.toFixed(4)}` : '';
    const failed =
      e.is_error === true || (typeof e.subtype === 'string' && e.subtype !== 'success')
        ? ` (${str(e.subtype) ?? 'error'})`
        : '';
    return [`■ finished${failed}: ${turns}${tokens(usage.input_tokens, usage.output_tokens)}${cost}`];
  }
  return [];
}

function codex(e: Json, cwd: string): string[] {
  const item = obj(e.item);
  if (e.type === 'thread.started') return ['● Codex session started'];
  if (e.type === 'item.started' && item.type === 'command_execution')
    return [`▸ ${unwrapShell(str(item.command) ?? '')}`];
  if (e.type === 'item.completed' && item.type === 'command_execution') {
    const code = typeof item.exit_code === 'number' && item.exit_code !== 0 ? [`  ✗ exit ${item.exit_code}`] : [];
    return [...indent(clip(str(item.aggregated_output) ?? '', RESULT_LINES), '    '), ...code];
  }
  if (e.type === 'item.completed' && item.type === 'file_change') {
    const changes = Array.isArray(item.changes) ? item.changes.map(obj) : [];
    return changes.map((c) => `▸ ${str(c.kind) ?? 'change'}  ${shortPath(str(c.path) ?? '', cwd)}`);
  }
  if (e.type === 'item.completed' && item.type === 'agent_message') return clip(str(item.text) ?? '', 20);
  if (e.type === 'item.completed' && item.type === 'error') return [`  ✗ ${str(item.message) ?? 'error'}`];
  if (e.type === 'turn.completed')
    return [`■ turn finished: ${tokens(obj(e.usage).input_tokens, obj(e.usage).output_tokens)}`];
  if (e.type === 'turn.failed' || e.type === 'error')
    return [`■ failed: ${str(obj(e.error).message) ?? str(e.message) ?? 'error'}`];
  return [];
}

function copilot(e: Json, cwd: string): string[] {
  const d = obj(e.data);
  if (e.type === 'tool.execution_start') return [`▸ ${str(d.toolName) ?? 'tool'}  ${toolInput(obj(d.arguments), cwd)}`];
  if (e.type === 'tool.execution_complete') {
    const text = str(obj(d.result).content) ?? '';
    return indent(
      clip(text.replace(/\n?<shellId: [^>]*>\s*$/, ''), RESULT_LINES),
      d.success === false ? '  ✗ ' : '    ',
    );
  }
  if (e.type === 'assistant.message' && str(d.content)?.trim()) return clip(str(d.content) ?? '', 20);
  if (e.type === 'result') return [`■ finished (exit ${typeof e.exitCode === 'number' ? e.exitCode : '?'})`];
  return [];
}

/** What a tool was asked to do, in one line: a command, a file, else its arguments. */
function toolInput(input: Json, cwd: string): string {
  const command = str(input.command);
  if (command) return oneLine(command);
  const file = str(input.file_path) ?? str(input.path) ?? str(input.notebook_path);
  if (file) return shortPath(file, cwd);
  const pattern = str(input.pattern) ?? str(input.query) ?? str(input.url);
  if (pattern) return oneLine(pattern);
  return oneLine(JSON.stringify(input));
}

/** `/bin/bash -c 'x'` → `x`: codex wraps every command in a shell. */
function unwrapShell(command: string): string {
  const m = /^(?:\/bin\/|\/usr\/bin\/)?(?:ba|z)?sh -l?c (.*)$/s.exec(command);
  if (!m?.[1]) return oneLine(command);
  const inner = m[1];
  const quoted = /^'(.*)'$/s.exec(inner) ?? /^"(.*)"$/s.exec(inner);
  return oneLine(quoted?.[1] ?? inner);
}

function shortPath(path: string, cwd: string): string {
  if (!isAbsolute(path)) return path;
  const rel = relative(cwd, path);
  return rel && !rel.startsWith('..') && !isAbsolute(rel) ? rel : path;
}

function contentOf(e: Json): Json[] {
  const content = obj(e.message).content;
  return Array.isArray(content) ? content.map(obj) : [];
}

function tokens(input: unknown, output: unknown): string {
  const n = (v: unknown): string => (typeof v === 'number' ? v.toLocaleString('en-US') : '?');
  return `${n(input)} input / ${n(output)} output tokens`;
}

/** The first `max` non-empty lines, each cut to a readable width, with a count of the rest. */
function clip(text: string, max: number): string[] {
  const lines = text
    .replace(/\r/g, '')
    .split('\n')
    .filter((l) => l.trim() !== '');
  const shown = lines.slice(0, max).map(cut);
  return lines.length > max
    ? [...shown, `… ${lines.length - max} more line${lines.length - max === 1 ? '' : 's'}`]
    : shown;
}

function indent(lines: readonly string[], prefix: string): string[] {
  return lines.map((l) => `${prefix}${l}`);
}

function oneLine(text: string): string {
  return cut(text.replace(/\s*\n\s*/g, ' ⏎ '));
}

function cut(line: string): string {
  return line.length > LINE_CHARS ? `${line.slice(0, LINE_CHARS - 1)}…` : line;
}

function str(v: unknown): string | null {
  return typeof v === 'string' ? v : null;
}

function obj(v: unknown): Json {
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : {};
}

/**
 * A stream for the agent's stdout that writes the readable form of each complete line to `sink`
 * (a partial line waits for its end; `end()` flushes it).
 */
export class AgentOutputRenderer {
  private pending = '';
  private readonly format: AgentOutputFormat;
  private readonly cwd: string;
  private readonly sink: NodeJS.WritableStream;

  constructor(format: AgentOutputFormat, cwd: string, sink: NodeJS.WritableStream) {
    this.format = format;
    this.cwd = cwd;
    this.sink = sink;
  }

  write(chunk: Buffer | string): boolean {
    this.pending += chunk.toString();
    const lines = this.pending.split('\n');
    this.pending = lines.pop() ?? '';
    const out = lines.flatMap((l) => renderAgentLine(this.format, l, this.cwd));
    return out.length === 0 ? true : this.sink.write(`${out.join('\n')}\n`);
  }

  end(): void {
    if (this.pending === '') return;
    const out = renderAgentLine(this.format, this.pending, this.cwd);
    this.pending = '';
    if (out.length > 0) this.sink.write(`${out.join('\n')}\n`);
  }
}
