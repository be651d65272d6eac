import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** One request the mock received: method, path, and the JSON body (null when none or not JSON). */
export interface RecordedRequest {
  method: string;
  url: string;
  headers: IncomingMessage["headers"];
  body: any;
}

/**
 * A model server on 127.0.0.1 for driving real agents offline: it records every request and answers
 * each model call with the next scripted text (the last one again when the script runs out).
 * Anthropic Messages (`POST /v1/messages`, streamed as SSE, or JSON when `stream` is false) for
 * Claude Code and pi; OpenAI Responses (`POST /v1/responses`, SSE) for Codex, whose WebSocket
 * attempt (`GET /v1/responses` with `Upgrade`) is answered 426 so that it falls back to HTTP at once.
 */
export class AgentMock {
  readonly requests: RecordedRequest[] = [];
  private readonly server: Server;
  private n = 0;

  private constructor(private readonly replies: string[]) {
    this.server = createServer((req, res) => void this.handle(req, res));
    this.server.on("upgrade", (req, socket) => {
      this.requests.push({ method: req.method ?? "", url: req.url ?? "", headers: req.headers, body: null });
      socket.end("HTTP/1.1 426 Upgrade Required\r\nConnection: close\r\nContent-Length: 0\r\n\r\n");
    });
  }

  /** Starts a mock answering with `replies` in turn; `url` is its base (`http://127.0.0.1:<port>`). */
  static async start(replies: string[]): Promise<AgentMock> {
    const mock = new AgentMock(replies);
    await new Promise<void>((resolve) => mock.server.listen(0, "127.0.0.1", resolve));
    return mock;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** The model calls received (POSTs to `/v1/messages` or `/v1/responses`), in order. */
  modelCalls(): RecordedRequest[] {
    return this.requests.filter((r) => r.method === "POST" && /\/v1\/(messages|responses)(\?|$)/.test(r.url));
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private next(): string {
    const text = this.replies[Math.min(this.n, this.replies.length - 1)] ?? "OK";
    this.n++;
    return text;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const raw = Buffer.concat(chunks).toString("utf8");
    let body: any = null;
    try {
      body = raw === "" ? null : JSON.parse(raw);
    } catch {
      body = null;
    }
    this.requests.push({ method: req.method ?? "", url: req.url ?? "", headers: req.headers, body });
    const path = (req.url ?? "").split("?")[0];
    if (req.method === "POST" && path === "/v1/messages") return this.anthropic(res, body);
    if (req.method === "POST" && path === "/v1/responses") return this.responses(res, body);
    if (req.method === "GET" && path === "/v1/responses") {
      res.writeHead(426, { "content-type": "text/plain" }).end("upgrade required");
      return;
    }
    if (req.method === "POST" && path === "/v1/messages/count_tokens") {
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ input_tokens: 100 }));
      return;
    }
    res.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify({ error: { message: `no ${path} here` } }));
  }

  private anthropic(res: ServerResponse, body: any): void {
    const text = this.next();
    const model = typeof body?.model === "string" ? body.model : "claude-mock";
    const id = `msg_mock${this.n}`;
    const usage = { input_tokens: 100, output_tokens: 7, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 };
    if (body?.stream !== true) {
      const message = { id, type: "message", role: "assistant", model, content: [{ type: "text", text }], stop_reason: "end_turn" };
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ ...message, stop_sequence: null, usage }));
      return;
    }
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    const send = (event: string, data: object) => res.write(`event: ${event}\ndata: ${JSON.stringify({ type: event, ...data })}\n\n`);
    const start = { id, type: "message", role: "assistant", model, content: [], stop_reason: null, stop_sequence: null };
    send("message_start", { message: { ...start, usage: { ...usage, output_tokens: 1 } } });
    send("content_block_start", { index: 0, content_block: { type: "text", text: "" } });
    send("content_block_delta", { index: 0, delta: { type: "text_delta", text } });
    send("content_block_stop", { index: 0 });
    send("message_delta", { delta: { stop_reason: "end_turn", stop_sequence: null }, usage: { output_tokens: 7 } });
    send("message_stop", {});
    res.end();
  }

  private responses(res: ServerResponse, body: any): void {
    const text = this.next();
    const id = `resp_mock${this.n}`;
    const itemId = `msg_mock${this.n}`;
    const model = typeof body?.model === "string" ? body.model : "gpt-mock";
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    let seq = 0;
    const send = (type: string, data: object) =>
      res.write(`event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: seq++, ...data })}\n\n`);
    const base = { id, object: "response", created_at: Math.floor(Date.now() / 1000), model };
    const item = {
      type: "message",
      id: itemId,
      role: "assistant",
      status: "completed",
      content: [{ type: "output_text", text, annotations: [] }],
    };
    send("response.created", { response: { ...base, status: "in_progress", output: [] } });
    send("response.output_item.added", { output_index: 0, item: { ...item, status: "in_progress", content: [] } });
    send("response.content_part.added", { item_id: itemId, output_index: 0, content_index: 0, part: { type: "output_text", text: "" } });
    send("response.output_text.delta", { item_id: itemId, output_index: 0, content_index: 0, delta: text });
    send("response.output_text.done", { item_id: itemId, output_index: 0, content_index: 0, text });
    send("response.content_part.done", { item_id: itemId, output_index: 0, content_index: 0, part: item.content[0] });
    send("response.output_item.done", { output_index: 0, item });
    const usage = {
      input_tokens: 100,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: 7,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: 107,
    };
    send("response.completed", { response: { ...base, status: "completed", output: [item], usage } });
    res.end();
  }
}
