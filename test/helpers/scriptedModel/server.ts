// A scripted model server for the real agent CLIs: HTTP on 127.0.0.1 (a free port), speaking the
// API of the CLI under test through an adapter (anthropic.ts, openaiChat.ts, openaiResponses.ts,
// gemini.ts), its answers decided by roleScript.ts. Bounded: past `maxRequests` every request is
// answered 503 and past `lifetimeMs` the server closes, so a CLI that loops cannot run up a test.
import { appendFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { folderOf, type Conversation } from './roleScript.ts';

export interface ModelRequest {
  readonly method: string;
  readonly path: string;
  readonly body: unknown;
  readonly at: number;
}

/** A wrong answer the test asks for (an expired key, an overloaded server), instead of the script's. */
export interface Failure {
  readonly status: number;
  readonly body: unknown;
  /** Headers sent with it (a 429's `retry-after`). */
  readonly headers?: Readonly<Record<string, string>>;
}

export interface Adapter {
  readonly name: string;
  handles(method: string, path: string): boolean;
  /** The conversation Springfield's kickoff began, as this request carries it; null for any other request. */
  conversation(request: ModelRequest): Conversation | null;
  /** Answers one request; `send` writes the whole response. */
  respond(request: ModelRequest, res: ServerResponse): void;
}

export interface ScriptedModelOptions {
  readonly adapters: readonly Adapter[];
  readonly maxRequests?: number;
  readonly lifetimeMs?: number;
  /** Every request appended to this file as a JSON line (for a person reading a failed test). */
  readonly logFile?: string;
  /** Answers a request with a failure instead of the script (e.g. every request: 401). */
  readonly fail?: (request: ModelRequest) => Failure | null;
  /** Holds a request this long before answering it (a model that thinks, or never answers while the test lasts). */
  readonly delayMs?: (request: ModelRequest) => number;
  /** Holds a request until this settles (a model that answers once the test has seen what it waits for). */
  readonly hold?: (request: ModelRequest) => Promise<void>;
}

export interface ScriptedModel {
  readonly url: string;
  readonly requests: readonly ModelRequest[];
  /** Each conversation Springfield's kickoff began, with the folder its agent's first command (`pwd`) answered. */
  conversations(): { kickoff: string; folder: string | null }[];
  close(): Promise<void>;
}

export async function startScriptedModel(options: ScriptedModelOptions): Promise<ScriptedModel> {
  const maxRequests = options.maxRequests ?? 400;
  const requests: ModelRequest[] = [];
  const server = createServer((req, res) => {
    void readBody(req).then((raw) => {
      let body: unknown = raw;
      try {
        body = raw ? (JSON.parse(raw) as unknown) : null;
      } catch {
        // not JSON: kept as text
      }
      const request: ModelRequest = { method: req.method ?? 'GET', path: req.url ?? '/', body, at: Date.now() };
      requests.push(request);
      if (options.logFile) appendFileSync(options.logFile, JSON.stringify(request) + '\n');
      if (requests.length > maxRequests)
        return json(res, 503, {
          error: { type: 'overloaded_error', message: `scripted model: more than ${maxRequests} requests` },
        });
      if (options.hold) return void options.hold(request).then(() => answer(request, res));
      const delay = options.delayMs?.(request) ?? 0;
      if (delay > 0) return void setTimeout(() => answer(request, res), delay).unref();
      answer(request, res);
    });
  });
  const answer = (request: ModelRequest, res: ServerResponse): void => {
    if (res.destroyed) return;
    const failure = options.fail?.(request);
    if (failure) return json(res, failure.status, failure.body, failure.headers);
    const path = request.path.split('?')[0] ?? '/';
    const adapter = options.adapters.find((a) => a.handles(request.method, path));
    if (!adapter)
      return json(res, 404, {
        error: { type: 'not_found_error', message: `scripted model: no ${request.method} ${path}` },
      });
    try {
      adapter.respond(request, res);
    } catch (err) {
      json(res, 500, {
        error: {
          type: 'api_error',
          message: `scripted model: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`,
        },
      });
    }
  };
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const lifetime = setTimeout(() => void close(), options.lifetimeMs ?? 10 * 60_000);
  lifetime.unref();
  let closing: Promise<void> | null = null;
  const close = (): Promise<void> => {
    closing ??= new Promise<void>((resolve) => {
      clearTimeout(lifetime);
      server.close(() => resolve());
      server.closeAllConnections();
    });
    return closing;
  };
  const conversations = () => {
    const folders = new Map<string, string | null>();
    for (const request of requests) {
      const path = request.path.split('?')[0] ?? '/';
      const conversation = options.adapters.find((a) => a.handles(request.method, path))?.conversation(request);
      if (conversation)
        folders.set(conversation.kickoff, folderOf(conversation.results) ?? folders.get(conversation.kickoff) ?? null);
    }
    return [...folders].map(([kickoff, folder]) => ({ kickoff, folder }));
  };
  return { url: `http://127.0.0.1:${port}`, requests, conversations, close };
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', () => resolve(''));
  });
}

export function json(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Readonly<Record<string, string>> = {},
): void {
  res.writeHead(status, { ...headers, 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

/** Server-sent events: each entry an `event:` name (or none) and its data. */
export function sse(res: ServerResponse, events: readonly { event?: string; data: unknown }[]): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
  for (const e of events)
    res.write(
      `${e.event ? `event: ${e.event}\n` : ''}data: ${typeof e.data === 'string' ? e.data : JSON.stringify(e.data)}\n\n`,
    );
  res.end();
}
