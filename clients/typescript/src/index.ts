// askbridge: ask people (Slack, Discord, Telegram, email, the web inbox;
// PagerDuty pages) from a TypeScript agent and get the answer back. No runtime dependencies: the built-in fetch
// and node:crypto. The API is docs/openapi.yaml of the bridge.

import { createHmac, timingSafeEqual } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";

export * from "./types.js";
export * from "./approvals.js";
import type { AskBody, Batch, BatchAsked, BatchBody, BatchOutcome, BatchRespondBody, Detail, Item, Question, RespondBody, Run, Status } from "./types.js";

/**
 * An error of the bridge or of reaching it. `code` is the API's error code
 * (`invalid`, `not_found`, `already_answered`…), or `unreachable` when the
 * bridge could not be reached, `wait_timeout` when a client deadline passed.
 */
export class AskBridgeError extends Error {
  readonly code: string;
  readonly status: number;
  readonly details: Detail[];
  /** The first detail's field, if any. */
  readonly field?: string;
  constructor(code: string, message: string, status = 0, details: Detail[] = []) {
    super(details.length ? `${message}: ${details.map((d) => `${d.field}: ${d.problem}`).join("; ")}` : message);
    this.name = "AskBridgeError";
    this.code = code;
    this.status = status;
    this.details = details;
    this.field = details[0]?.field;
  }
}

/**
 * A wait reached its client deadline while the question is still pending.
 * The question stays pending: a later wait (or get) returns the answer.
 */
export class WaitTimeoutError extends AskBridgeError {
  readonly question: Question;
  constructor(q: Question) {
    super("wait_timeout", `question ${q.id} is still pending after the wait's deadline; it stays open and a later wait returns the answer`);
    this.name = "WaitTimeoutError";
    this.question = q;
  }
}

/**
 * A batch wait reached its client deadline while calls are still pending.
 * They stay pending: a later wait (or getApprovalBatch) returns them decided.
 */
export class BatchWaitTimeoutError extends AskBridgeError {
  readonly batch: Batch;
  constructor(b: Batch) {
    super("wait_timeout", `batch ${b.batch_id} still has ${b.pending} pending call(s) after the wait's deadline; they stay open and a later wait returns the decisions`);
    this.name = "BatchWaitTimeoutError";
    this.batch = b;
  }
}

export interface AskBridgeOptions {
  /** The bridge's base URL, e.g. http://127.0.0.1:8080. Default: BRIDGE_URL. */
  url?: string;
  /** Bearer token (an agent's or operator's). Default: BRIDGE_TOKEN. */
  token?: string;
  /** Project id. Default: BRIDGE_PROJECT, else "default". */
  project?: string;
  /** fetch to use (default: the global fetch). */
  fetch?: typeof fetch;
  /**
   * W3C trace context of the agent's run (`00-<trace id>-<span id>-<flags>`), sent as
   * `traceparent` on every request so the question's spans join the agent's trace.
   * Default: TRACEPARENT. A malformed value is not sent.
   */
  traceparent?: string;
  /** W3C `tracestate` sent with traceparent. Default: TRACESTATE. */
  tracestate?: string;
}

const traceparentForm = /^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$/;

/** A traceparent as W3C defines it (lower-case hex, no all-zero ids), else undefined. */
function validTraceparent(v: string | undefined): string | undefined {
  const t = v?.trim();
  if (!t || !traceparentForm.test(t) || t.startsWith("ff-")) return undefined;
  const [, trace, span] = t.split("-");
  if (/^0+$/.test(trace!) || /^0+$/.test(span!)) return undefined;
  return t;
}

/** Which page of the list (AskBridge.listPage). */
export interface ListPageOptions {
  status?: Status;
  /** At most this many records (1-1000; the bridge's default is 500). */
  limit?: number;
  /** The previous page's `next_cursor`; leave it out for the first page. */
  cursor?: string;
  signal?: AbortSignal;
}

/** One page of the list: `next_cursor` continues it, null on the last page. */
export interface QuestionPage {
  questions: Question[];
  next_cursor: string | null;
}

export interface WaitOptions {
  signal?: AbortSignal;
  /** Client deadline in milliseconds; the question stays pending after it (WaitTimeoutError). */
  timeoutMs?: number;
  /** Long-poll length per request in seconds (1 to 120, default 25). */
  pollSeconds?: number;
  /**
   * How long to keep retrying while the bridge cannot be reached or answers 502/503/504
   * (a restart, a redeploy), in milliseconds from the first failure (default 120000);
   * then the last error is thrown.
   */
  unreachableMs?: number;
}

const limits = { items: 4, header: 12, minOptions: 2, maxOptions: 4 };

/** The problem of an option that is the free-text "Other" every surface adds by itself. */
const otherOptionProblem = 'remove the "Other" option; the person can always answer in their own words ("Other" is added automatically)';

/** Whether a label is that "Other" ("Other", "Something else", …), as the bridge decides it. */
function isOtherLabel(label: string): boolean {
  const l = label.trim().toLowerCase().replace(/[.…: ]+$/u, "");
  return ["other", "other (please specify)", "other (specify)", "something else"].includes(l);
}

/**
 * Checks what the bridge would surely refuse, before anything is sent, with
 * the API's messages. The bridge checks everything again.
 */
export function validateAsk(body: AskBody): void {
  const details: Detail[] = [];
  const add = (field: string, problem: string) => details.push({ field, problem });
  if (body.questions !== undefined && body.question !== undefined) {
    add("question", "use either questions[] or the question+options shorthand, not both");
  }
  let items: Item[] = [];
  let prefix = (i: number) => `questions[${i}]`;
  if (body.questions !== undefined) {
    items = body.questions;
  } else if (body.question !== undefined || body.options !== undefined) {
    if (!body.question) add("question", "required with options");
    items = [{ question: body.question ?? "", header: body.header, options: body.options }];
    prefix = () => "";
  }
  if (body.questions !== undefined || body.question === undefined) {
    if (items.length === 0) add("questions", "at least 1 question is required");
    if (items.length > limits.items) add("questions", `at most ${limits.items} questions, got ${items.length}`);
  }
  items.forEach((it, i) => {
    const f = (name: string) => (prefix(i) ? `${prefix(i)}.${name}` : name);
    if (!it || typeof it.question !== "string" || it.question.trim() === "") {
      if (prefix(i)) add(f("question"), "required");
      return;
    }
    items.slice(0, i).forEach((prev, j) => {
      if (prev?.question === it.question) add(f("question"), `same text as questions[${j}]; each question must be distinct`);
    });
    if (it.header !== undefined && [...it.header].length > limits.header) {
      add(f("header"), `at most ${limits.header} characters`);
    }
    const n = it.options?.length ?? 0;
    if (n !== 0 && (n < limits.minOptions || n > limits.maxOptions)) {
      add(f("options"), `${limits.minOptions} to ${limits.maxOptions} options, or none for an open-ended question; got ${n}`);
    }
    (it.options ?? []).forEach((o, k) => {
      const of = `${f("options")}[${k}].label`;
      if (!o || typeof o.label !== "string" || o.label.trim() === "") {
        add(of, "required");
        return;
      }
      if (isOtherLabel(o.label)) {
        add(of, otherOptionProblem);
        return;
      }
      const first = (it.options ?? []).findIndex((p) => p?.label === o.label);
      if (first < k) add(of, `same label as options[${first}]; labels must be unique within a question`);
    });
  });
  if (body.parent_run_id) {
    throw new AskBridgeError("subagent_not_allowed", "only parent conversations can ask user questions", 0);
  }
  if (details.length) throw new AskBridgeError("invalid", "the question is not valid", 0, details);
}

/** Resolves after ms, or rejects when signal aborts. */
function pause(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/** The client of one bridge and project. */
export class AskBridge {
  readonly url: string;
  readonly project: string;
  readonly #token?: string;
  readonly #fetch: typeof fetch;
  readonly #traceparent?: string;
  readonly #tracestate?: string;

  constructor(opts: AskBridgeOptions = {}) {
    const env = typeof process !== "undefined" ? process.env : {};
    const url = opts.url ?? env.BRIDGE_URL;
    if (!url) throw new AskBridgeError("invalid", "no bridge URL: pass {url} or set BRIDGE_URL (e.g. http://127.0.0.1:8080)");
    this.url = url.replace(/\/+$/, "");
    this.project = opts.project ?? env.BRIDGE_PROJECT ?? "default";
    this.#token = opts.token ?? env.BRIDGE_TOKEN;
    this.#fetch = opts.fetch ?? fetch;
    this.#traceparent = validTraceparent(opts.traceparent ?? env.TRACEPARENT);
    const state = (opts.tracestate ?? env.TRACESTATE)?.trim();
    if (this.#traceparent && state && !/[\r\n]/.test(state)) this.#tracestate = state;
  }

  #path(rest: string): string {
    return `${this.url}/api/projects/${encodeURIComponent(this.project)}${rest}`;
  }

  async #call<T>(method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<T> {
    const headers: Record<string, string> = { accept: "application/json" };
    if (body !== undefined) headers["content-type"] = "application/json";
    if (this.#token) headers.authorization = `Bearer ${this.#token}`;
    if (this.#traceparent) headers.traceparent = this.#traceparent;
    if (this.#tracestate) headers.tracestate = this.#tracestate;
    let res: Response;
    try {
      res = await this.#fetch(this.#path(path), { method, headers, body: body === undefined ? undefined : JSON.stringify(body), signal });
    } catch (err) {
      if (signal?.aborted) throw signal.reason ?? err;
      const cause = (err as { cause?: { code?: string; message?: string } }).cause;
      throw new AskBridgeError("unreachable", `the bridge at ${this.url} is not reachable (${cause?.code ?? cause?.message ?? (err as Error).message}); is askbridge serve running there?`);
    }
    const text = await res.text();
    let data: unknown;
    try {
      data = text ? JSON.parse(text) : undefined;
    } catch {
      data = undefined;
    }
    if (!res.ok) {
      const e = (data as { error?: { code?: string; message?: string; details?: Detail[] } } | undefined)?.error;
      throw new AskBridgeError(e?.code ?? `http_${res.status}`, e?.message ?? `the bridge at ${this.url} answered ${res.status}: ${text.slice(0, 200)}`, res.status, e?.details ?? []);
    }
    return data as T;
  }

  /** Asks: the record (status pending), with `message` for the agent. */
  async ask(body: AskBody, opts: { signal?: AbortSignal } = {}): Promise<Question> {
    validateAsk(body);
    return this.#call<Question>("POST", "/agent-questions", body, opts.signal);
  }

  /**
   * Waits until the question is no longer pending: loops the long-poll.
   * With `timeoutMs` it throws WaitTimeoutError when the deadline passes;
   * the question stays pending and a later wait returns its answer. It
   * carries on through a restart of the bridge, retrying for up to
   * `unreachableMs` without an answer.
   */
  async wait(id: string, opts: WaitOptions = {}): Promise<Question> {
    return this.#poll<Question>(`/agent-questions/${encodeURIComponent(id)}/wait`, (q) => q.status !== "pending", (q) => new WaitTimeoutError(q), opts);
  }

  // Loops a long-poll until done(record), through restarts of the bridge
  // (retrying for up to unreachableMs without an answer) and up to the
  // client deadline (then timedOut(last record) is thrown).
  async #poll<T>(path: string, done: (r: T) => boolean, timedOut: (r: T) => Error, opts: WaitOptions): Promise<T> {
    const poll = Math.min(120, Math.max(1, opts.pollSeconds ?? 25));
    const deadline = opts.timeoutMs === undefined ? Infinity : Date.now() + opts.timeoutMs;
    const limit = opts.unreachableMs ?? 120_000;
    let lostAt: number | undefined; // when the bridge stopped answering
    let backoff = 500;
    for (;;) {
      opts.signal?.throwIfAborted();
      const left = deadline - Date.now();
      const secs = Math.max(1, Math.min(poll, Math.ceil(left / 1000)));
      let r: T;
      try {
        r = await this.#call<T>("GET", `${path}?timeout=${secs}s`, undefined, opts.signal);
      } catch (err) {
        // A restart: the bridge answers its waits (still pending) and goes
        // away for a moment. Retry until it is back, within the limit.
        if (!(err instanceof AskBridgeError) || !(err.code === "unreachable" || [502, 503, 504].includes(err.status))) throw err;
        const now = Date.now();
        lostAt ??= now;
        if (now - lostAt >= limit || now >= deadline) throw err;
        await pause(Math.min(backoff, deadline - now), opts.signal);
        backoff = Math.min(backoff * 2, 5000);
        continue;
      }
      lostAt = undefined;
      backoff = 500;
      if (done(r)) return r;
      if (Date.now() >= deadline) throw timedOut(r);
    }
  }

  /** Asks and waits for the final record (see wait). */
  async askAndWait(body: AskBody, opts: WaitOptions = {}): Promise<Question> {
    const q = await this.ask(body, { signal: opts.signal });
    if (q.status !== "pending") return q;
    return this.wait(q.id, opts);
  }

  /** One record. */
  get(id: string, opts: { signal?: AbortSignal } = {}): Promise<Question> {
    return this.#call<Question>("GET", `/agent-questions/${encodeURIComponent(id)}`, undefined, opts.signal);
  }

  /**
   * Every record of the project, oldest first, read page after page to the
   * last; `status` filters (e.g. "pending"), `runId` lists one run's. For a
   * large backlog, `iterate` yields them as the pages come and `listPage`
   * reads one page.
   */
  async list(opts: { status?: Status; runId?: string; signal?: AbortSignal } = {}): Promise<Question[]> {
    if (opts.runId) {
      const out = await this.#call<{ questions: Question[] }>("GET", `/agent-runs/${encodeURIComponent(opts.runId)}/questions`, undefined, opts.signal);
      return opts.status ? out.questions.filter((q) => q.status === opts.status) : out.questions;
    }
    const all: Question[] = [];
    for await (const q of this.iterate(opts)) all.push(q);
    return all;
  }

  /**
   * One page of the project's records, oldest first: at most `limit`
   * (1-1000, the bridge's default 500), from `cursor` (the previous page's
   * `next_cursor`) on. `next_cursor` is null on the last page; a page may be
   * short, even empty, before it.
   */
  listPage(opts: ListPageOptions = {}): Promise<QuestionPage> {
    const q = new URLSearchParams();
    if (opts.status) q.set("status", opts.status);
    if (opts.limit !== undefined) q.set("limit", String(opts.limit));
    if (opts.cursor) q.set("cursor", opts.cursor);
    const qs = q.toString();
    return this.#call<QuestionPage>("GET", `/agent-questions${qs ? `?${qs}` : ""}`, undefined, opts.signal);
  }

  /** Yields every record of the project, oldest first, reading the pages as it goes (`for await`). */
  async *iterate(opts: Omit<ListPageOptions, "cursor"> = {}): AsyncGenerator<Question> {
    let cursor: string | null = null;
    do {
      const page: QuestionPage = await this.listPage({ ...opts, limit: opts.limit ?? 1000, cursor: cursor ?? undefined });
      yield* page.questions;
      cursor = page.next_cursor ?? null;
    } while (cursor);
  }

  /**
   * Withdraws a pending question for the agent (reason "agent", the default:
   * the agent no longer waits), or records a person's dismissal (reason
   * "user"), with an optional note shown on every copy. The Go and Python
   * clients default the same way.
   */
  cancel(id: string, opts: { reason?: "user" | "agent"; note?: string; signal?: AbortSignal } = {}): Promise<Question> {
    const body: Record<string, string> = { reason: opts.reason ?? "agent" };
    if (opts.note) body.note = opts.note;
    return this.#call<Question>("POST", `/agent-questions/${encodeURIComponent(id)}/cancel`, body, opts.signal);
  }

  /** Answers (an operator's token, or a bridge without tokens): the API's respond body. */
  respond(id: string, body: RespondBody, opts: { signal?: AbortSignal } = {}): Promise<{ id: string; status: string; run_id: string }> {
    return this.#call("POST", `/agent-questions/${encodeURIComponent(id)}/respond`, body, opts.signal);
  }

  /**
   * Asks several approvals of one run as one batch, in one request: one
   * entry per tool call, each keyed by its `action.call_id`. People see them
   * together and decide them one by one or with Allow all / Deny all; each
   * call is its own record. Every entry is checked before any is asked. A
   * call asked before (same call_id in the run) is not asked again: its
   * record comes back in `calls`, whatever its state.
   */
  askApprovalBatch(body: BatchBody, opts: { signal?: AbortSignal } = {}): Promise<BatchAsked> {
    return this.#call<BatchAsked>("POST", "/approval-batches", body, opts.signal);
  }

  /** A batch: its calls in the order they were asked, and how many are pending. */
  getApprovalBatch(id: string, opts: { signal?: AbortSignal } = {}): Promise<Batch> {
    return this.#call<Batch>("GET", `/approval-batches/${encodeURIComponent(id)}`, undefined, opts.signal);
  }

  /**
   * Waits until no call of the batch is pending (a call that joins the batch
   * meanwhile is waited for too) and returns it with every call's final
   * record. As wait: `timeoutMs` throws BatchWaitTimeoutError (the calls
   * stay pending); a restart of the bridge is waited out. To act on each
   * call as soon as it is decided, wait on each call's id instead.
   */
  waitApprovalBatch(id: string, opts: WaitOptions = {}): Promise<Batch> {
    return this.#poll<Batch>(`/approval-batches/${encodeURIComponent(id)}/wait`, (b) => b.status !== "pending", (b) => new BatchWaitTimeoutError(b), opts);
  }

  /**
   * Allow all or Deny all (an operator's token, or a bridge without
   * tokens): decides every still-pending call of the batch (or of
   * `questions`); calls decided already keep their decision (`already`).
   */
  respondApprovalBatch(id: string, body: BatchRespondBody, opts: { signal?: AbortSignal } = {}): Promise<BatchOutcome> {
    return this.#call<BatchOutcome>("POST", `/approval-batches/${encodeURIComponent(id)}/respond`, body, opts.signal);
  }

  /** Reports that a run's process stopped (webhook mode): only then may an answer resume it. */
  pauseRun(runId: string, opts: { signal?: AbortSignal } = {}): Promise<Run> {
    return this.#call<Run>("POST", `/agent-runs/${encodeURIComponent(runId)}/pause`, {}, opts.signal);
  }

  /** A run record. */
  getRun(runId: string, opts: { signal?: AbortSignal } = {}): Promise<Run> {
    return this.#call<Run>("GET", `/agent-runs/${encodeURIComponent(runId)}`, undefined, opts.signal);
  }
}

// ---------------------------------------------------------------- webhooks

/** The body of a resume webhook, with its delivery id (the same on every retry). */
export interface WebhookEvent {
  event: "question.answered" | "question.expired" | "question.cancelled" | string;
  question: Question;
  run: { id: string; resumed_from?: string; agent_id: string; project_id: string };
  user_message: string;
  /** The bridge's attempt at this delivery (1 on the first); each attempt is signed anew. */
  attempt?: number;
  deliveryId: string;
}

/** A refused webhook: `code` is missing_signature, stale_signature, bad_signature or bad_body. */
export class WebhookVerificationError extends Error {
  readonly code: "missing_signature" | "stale_signature" | "bad_signature" | "bad_body";
  constructor(code: WebhookVerificationError["code"], message: string) {
    super(message);
    this.name = "WebhookVerificationError";
    this.code = code;
  }
}

type HeaderBag = Headers | Record<string, string | string[] | undefined>;

function header(h: HeaderBag, name: string): string {
  if (typeof (h as Headers).get === "function") return (h as Headers).get(name) ?? "";
  const want = name.toLowerCase();
  for (const [k, v] of Object.entries(h as Record<string, string | string[] | undefined>)) {
    if (k.toLowerCase() === want) return Array.isArray(v) ? v.join(",") : (v ?? "");
  }
  return "";
}

function hmacHex(secret: string | Uint8Array, prefix: string, body: Uint8Array): string {
  return createHmac("sha256", secret).update(prefix).update(body).digest("hex");
}

function sameHex(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** Anyone can sign with an empty secret: verifiers and handlers refuse one. */
function requireSecret(secret: string | Uint8Array | null | undefined): string | Uint8Array {
  if (secret == null || secret.length === 0) {
    throw new Error("askbridge: the webhook secret is empty or missing: pass `secret` (the bridge's BRIDGE_WEBHOOK_SECRET / webhooks.secret, or the agent's webhook_secret); anyone can sign with an empty secret");
  }
  return secret;
}

export interface VerifyOptions {
  /** webhooks.secret of the bridge (BRIDGE_WEBHOOK_SECRET), or the agent's webhook_secret. Never empty. */
  secret: string | Uint8Array;
  headers: HeaderBag;
  /** The raw body, exactly as received. */
  body: string | Uint8Array;
  /** Tolerance of the signature timestamp in seconds (default 300). */
  toleranceSeconds?: number;
  /** Now, in milliseconds (tests). */
  now?: number;
}

/**
 * Verifies X-Askbridge-Signature over the raw body before parsing it: the
 * v2 signature (it covers X-Askbridge-Delivery) when the header has one,
 * else v1; a timestamp more than the tolerance from now is refused; the
 * compare is constant-time. Resolves to the event with its delivery id.
 * Rejects with a plain Error when the secret is empty or missing.
 */
export async function verifyWebhook(opts: VerifyOptions): Promise<WebhookEvent> {
  return verifyWebhookSync(opts).event;
}

function verifyWebhookSync(opts: VerifyOptions): { event: WebhookEvent; signing: string } {
  const secret = requireSecret(opts.secret);
  const raw = typeof opts.body === "string" ? Buffer.from(opts.body) : opts.body;
  const sig = header(opts.headers, "x-askbridge-signature");
  const id = header(opts.headers, "x-askbridge-delivery");
  let ts = "";
  const v1: string[] = [];
  const v2: string[] = [];
  for (const part of sig.split(",")) {
    const i = part.indexOf("=");
    if (i < 0) continue;
    const k = part.slice(0, i).trim();
    const v = part.slice(i + 1);
    if (k === "t") ts = v;
    else if (k === "v1") v1.push(v);
    else if (k === "v2") v2.push(v);
  }
  const useV2 = v2.length > 0;
  const sigs = useV2 ? v2 : v1;
  if (!/^[+-]?\d+$/.test(ts) || sigs.length === 0) {
    throw new WebhookVerificationError("missing_signature", "missing or malformed X-Askbridge-Signature header");
  }
  const tolerance = opts.toleranceSeconds && opts.toleranceSeconds > 0 ? opts.toleranceSeconds : 300;
  const nowMs = opts.now ?? Date.now();
  const d = nowMs - Number(ts) * 1000;
  if (d > tolerance * 1000 || d < -tolerance * 1000) {
    throw new WebhookVerificationError("stale_signature", "signature timestamp outside the tolerance");
  }
  const want = useV2 ? hmacHex(secret, `${ts}.${id}.`, raw) : hmacHex(secret, `${ts}.`, raw);
  let ok = false;
  for (const s of sigs) ok = sameHex(want, s) || ok;
  if (!ok) throw new WebhookVerificationError("bad_signature", "signature does not match the body");
  if (!id) throw new WebhookVerificationError("bad_body", "missing X-Askbridge-Delivery header");
  let ev: WebhookEvent;
  try {
    ev = JSON.parse(Buffer.from(raw).toString("utf8"));
  } catch {
    throw new WebhookVerificationError("bad_body", "the body is not JSON");
  }
  if (!ev || typeof ev.event !== "string" || !ev.question?.id) {
    throw new WebhookVerificationError("bad_body", "not a resume webhook body");
  }
  ev.deliveryId = id;
  return { event: ev, signing: `${ts}.${hmacHex(secret, `${ts}.`, raw)}` };
}

/** Remembers deliveries so a duplicate resumes nothing twice. Implement it on a shared store across replicas. */
export interface Deduper {
  /** "new" claims the id; "done" = handled before; "busy" = being handled now. */
  begin(id: string): Promise<"new" | "done" | "busy"> | "new" | "done" | "busy";
  finish(id: string, ok: boolean): Promise<void> | void;
}

/** An in-memory Deduper (one process), forgetting ids after ttlMs (default 48 h). */
export function memoryDeduper(ttlMs = 48 * 3600 * 1000): Deduper {
  const seen = new Map<string, { done: boolean; at: number }>();
  return {
    begin(id) {
      const now = Date.now();
      for (const [k, v] of seen) if (now - v.at > ttlMs) seen.delete(k);
      const s = seen.get(id);
      if (s) return s.done ? "done" : "busy";
      seen.set(id, { done: false, at: now });
      return "new";
    },
    finish(id, ok) {
      if (ok) seen.set(id, { done: true, at: Date.now() });
      else seen.delete(id);
    },
  };
}

export interface WebhookHandlerOptions {
  /** As VerifyOptions.secret: building a handler without one throws. */
  secret: string | Uint8Array;
  /** Runs the continuation. A throw makes the bridge retry (503). */
  onEvent: (ev: WebhookEvent) => Promise<void> | void;
  dedupe?: Deduper;
  toleranceSeconds?: number;
}

/**
 * Handles a resume webhook from a fetch-API Request (Next.js, Hono, Bun,
 * Deno…): 200 handled or duplicate; 401 bad, stale or replayed signature;
 * 400 not a resume webhook; 503 with Retry-After while the same delivery is
 * being handled or when onEvent throws. A delivery (and its signature)
 * counts as seen only once onEvent succeeded, so a retry after a failure
 * is handled, even within the same second. Throws when the secret is
 * empty or missing.
 */
export function fetchWebhookHandler(opts: WebhookHandlerOptions): (req: Request) => Promise<Response> {
  const handle = core(opts);
  return async (req) => {
    if (req.method !== "POST") return new Response("POST only\n", { status: 405, headers: { allow: "POST" } });
    const body = new Uint8Array(await req.arrayBuffer());
    const r = await handle(req.headers, body);
    return new Response(r.text, { status: r.status, headers: r.headers });
  };
}

/** The same handler for Node's http server (or Express without a body parser). */
export function nodeWebhookHandler(opts: WebhookHandlerOptions): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  const handle = core(opts);
  return async (req, res) => {
    const send = (status: number, text: string, headers: Record<string, string> = {}) => {
      res.writeHead(status, { "content-type": "text/plain; charset=utf-8", ...headers });
      res.end(text);
    };
    if (req.method !== "POST") return send(405, "POST only\n", { allow: "POST" });
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const c of req) {
      size += (c as Buffer).length;
      if (size > maxBody) return send(413, "body too large\n");
      chunks.push(c as Buffer);
    }
    const r = await handle(req.headers, Buffer.concat(chunks));
    send(r.status, r.text, r.headers);
  };
}

const maxBody = 1 << 20;

function core(opts: WebhookHandlerOptions) {
  requireSecret(opts.secret);
  const dedupe = opts.dedupe ?? memoryDeduper();
  const later = { status: 503, text: "try again later\n", headers: { "retry-after": "5" } };
  return async (headers: HeaderBag, body: Uint8Array): Promise<{ status: number; text: string; headers: Record<string, string> }> => {
    if (body.length > maxBody) return { status: 413, text: "body too large\n", headers: {} };
    let v: { event: WebhookEvent; signing: string };
    try {
      v = verifyWebhookSync({ secret: opts.secret, headers, body, toleranceSeconds: opts.toleranceSeconds });
    } catch (err) {
      const e = err as WebhookVerificationError;
      return { status: e.code === "bad_body" ? 400 : 401, text: `${e.message}\n`, headers: {} };
    }
    const id = v.event.deliveryId;
    const state = await dedupe.begin(id);
    if (state === "done") return { status: 200, text: "duplicate\n", headers: {} };
    if (state === "busy") return later;
    // A new delivery id with a signature handled (or being handled) under
    // another id is a captured delivery sent again. A signature counts as
    // used only once its delivery was handled: a retry after a failure is
    // handled, even one with the same signature (the same second).
    const sig = `signature:${v.signing}`;
    if ((await dedupe.begin(sig)) !== "new") {
      await dedupe.finish(id, false);
      return { status: 401, text: "this signature was already used; a delivery is never sent twice with one signature\n", headers: {} };
    }
    try {
      await opts.onEvent(v.event);
    } catch {
      await dedupe.finish(sig, false);
      await dedupe.finish(id, false);
      return later;
    }
    await dedupe.finish(sig, true);
    await dedupe.finish(id, true);
    return { status: 200, text: "ok\n", headers: {} };
  };
}

/**
 * Durable mode with several approvals in one step: true when every record
 * is final and `questionId` is the last of them to be decided (latest
 * updated_at, then id). Each resume webhook asks this; exactly one of them
 * continues the step, however the webhooks interleave or repeat.
 */
export function lastDecided(records: readonly Question[], questionId: string): boolean {
  if (records.length === 0 || records.some((q) => q.status === "pending")) return false;
  const at = (q: Question): bigint => {
    const m = /\.(\d+)/.exec(q.updated_at);
    const frac = BigInt(((m?.[1] ?? "") + "000000000").slice(0, 9));
    return BigInt(Math.floor(Date.parse(q.updated_at) / 1000)) * 1_000_000_000n + frac;
  };
  const last = [...records].sort((a, b) => (at(a) < at(b) ? -1 : at(a) > at(b) ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0)).at(-1)!;
  return last.id === questionId;
}

export * from "./ask-user.js";
