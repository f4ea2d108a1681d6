// askbridge/langgraph: LangGraph.js (@langchain/langgraph 1.7.x) interrupts
// answered by people through askbridge.
//
// In a node: `const answer = askbridgeInterrupt({question: "Which env?", options: [...]})`
// (the final record) or `const d = approvalInterrupt({tool, input})` (an
// ApprovalDecision). Both pause the graph with interrupt(); the node re-runs
// from the top on resume and gets the answer.
//
// The driver: `await runWithAskbridge(bridge, graph, input, config)` invokes the
// graph and, each time it stops on `__interrupt__`, asks the step's
// interrupts (the approvals as one batch in one request: run `<thread
// id>:<first interrupt id>`, each keyed by its interrupt id; questions with
// idempotency key `<thread id>:<interrupt id>`, so a re-run node never asks
// twice) and resumes with `new Command({resume: {[interruptId]: answer}})`.
// LangChain's human-in-the-loop middleware requests (`{actionRequests,
// reviewConfigs}`) become one approval per action, with Edit where the
// middleware allows `edit`, and come back as `{decisions: [...]}`.
// Durable: `askInterrupts(...)` with resumeUrl and exit; on each webhook
// `resumeCommand(bridge, graph, config, event)` gives the Command to invoke
// with, once every interrupt of the step is decided (exactly once).
// A process that stopped while people decide picks up where it was: the
// driver run again on the same thread (with a checkpointer that outlives the
// process) re-attaches to the pending questions instead of asking again.

import { Command, interrupt } from "@langchain/langgraph";
import { AskBridge, approvalBody, approvalOutcome, askApprovals, lastDecided, turnRecords, turnRunId, waitApprovals, type AskBody, type Question, type WaitOptions, type WebhookEvent } from "./index.js";
import { askUserAnswer, askUserItems, type AskUserAnswer, type AskUserInput } from "./ask-user.js";

/**
 * What a node's approval resumes with: approved with the arguments to run
 * (typed as the input the node asked with; a person's edit is an object
 * the bridge does not check against that type), or denied with why.
 */
export type ApprovalDecision<I = Record<string, unknown>> =
  | {
      approved: true;
      /** Arguments to run with (a person's edit, or the original). */
      input: I;
      edited: boolean;
      always: boolean;
      reason?: undefined;
    }
  | {
      approved: false;
      input?: undefined;
      edited: false;
      always: false;
      /** Why not: the person's note, "nobody answered within 30 min", "dismissed by maria: …". */
      reason: string;
    };

const ASK = "askbridge.ask";
const APPROVE = "askbridge.approval";

interface AskValue {
  type: typeof ASK;
  body: AskBody;
}
interface ApproveValue {
  type: typeof APPROVE;
  tool: string;
  input: Record<string, unknown>;
  allowEdit: boolean;
  alwaysAllow: boolean;
  question?: string;
  ask?: AskBody;
}
/** LangChain's HITL middleware interrupt value. */
export interface HITLRequest {
  actionRequests: { name: string; args: Record<string, unknown>; description?: string }[];
  reviewConfigs?: { actionName: string; allowedDecisions: ("approve" | "edit" | "reject")[] }[];
}
export type HITLDecision = { type: "approve" } | { type: "edit"; editedAction: { name: string; args: Record<string, unknown> } } | { type: "reject"; message?: string };

/** In a node: asks a question (the API's body) and returns the final record. */
export function askbridgeInterrupt(body: AskBody): Question {
  return interrupt<AskValue, Question>({ type: ASK, body });
}

/**
 * In a node or a tool: ask_user in the MCP tool's shape (1-4 questions with
 * headers and options); returns the MCP tool's prose and structured result.
 */
export function askUserInterrupt(input: AskUserInput): AskUserAnswer {
  return askUserAnswer(askbridgeInterrupt({ questions: askUserItems(input) }));
}

/**
 * In a node: asks to approve a tool call. Edit is offered unless allowEdit
 * is false (the node runs `decision.input`); "Always allow" unless
 * alwaysAllow is false (the node keeps `decision.always` in its state).
 */
export function approvalInterrupt<I extends Record<string, unknown> = Record<string, unknown>>(req: { tool: string; input?: I; allowEdit?: boolean; alwaysAllow?: boolean; question?: string; ask?: AskBody }): ApprovalDecision<I> {
  return interrupt<ApproveValue, ApprovalDecision<I>>({ type: APPROVE, tool: req.tool, input: req.input ?? {}, allowEdit: req.allowEdit ?? true, alwaysAllow: req.alwaysAllow ?? true, question: req.question, ask: req.ask });
}

/** One interrupt as `result.__interrupt__` lists it. */
export interface GraphInterrupt {
  id?: string;
  value?: unknown;
}

export interface DriverOptions {
  /** The thread (default config.configurable.thread_id). */
  threadId?: string;
  /** Anything else of every ask: route, targets, responders, timeout, agent_id. */
  ask?: AskBody;
  /** Webhook mode: where the bridge POSTs the resume webhook. */
  resumeUrl?: string;
}

interface Planned {
  interruptId: string;
  bodies: AskBody[];
  /** Approvals of tool calls: asked in the step's batch (bodies carry action.call_id). */
  batch: boolean;
  answer: (records: Question[]) => unknown;
}

function isHITL(v: unknown): v is HITLRequest {
  return !!v && typeof v === "object" && Array.isArray((v as HITLRequest).actionRequests);
}

function decision(q: Question): ApprovalDecision {
  const o = approvalOutcome(q);
  return o.approved ? { approved: true, input: o.input, edited: o.edited, always: o.always } : { approved: false, edited: false, always: false, reason: o.reason };
}

// What to ask for one interrupt, and how its records become the resume
// value. Approvals go in the step's run `run`; questions in a run of their own.
function plan(it: GraphInterrupt, threadId: string, run: string, opts: DriverOptions): Planned {
  if (!it.id) throw new Error("askbridge: an interrupt without an id cannot be resumed by id (LangGraph 1.x gives every interrupt one)");
  const key = `${threadId}:${it.id}`;
  const v = it.value as AskValue | ApproveValue | HITLRequest | undefined;
  const withResume = (b: AskBody): AskBody => (opts.resumeUrl ? { ...b, resume: { url: opts.resumeUrl } } : b);
  if (v && (v as AskValue).type === ASK) {
    const b = (v as AskValue).body;
    return { interruptId: it.id, bodies: [withResume({ ...opts.ask, ...b, run_id: key, idempotency_key: key })], batch: false, answer: (r) => r[0] };
  }
  if (v && (v as ApproveValue).type === APPROVE) {
    const a = v as ApproveValue;
    const body = approvalBody({ runId: run, callId: it.id, tool: a.tool, input: a.input, allowEdit: a.allowEdit, alwaysAllow: a.alwaysAllow, question: a.question, resumeUrl: opts.resumeUrl, ask: { ...opts.ask, ...a.ask } });
    return { interruptId: it.id, bodies: [body], batch: true, answer: (r) => decision(r[0]) };
  }
  if (isHITL(v)) {
    const bodies = v.actionRequests.map((ar, i) => {
      const allowed = v.reviewConfigs?.find((c) => c.actionName === ar.name)?.allowedDecisions ?? ["approve", "edit", "reject"];
      return approvalBody({ runId: run, callId: `${it.id}:${i}`, tool: ar.name, input: ar.args, allowEdit: allowed.includes("edit"), question: ar.description, resumeUrl: opts.resumeUrl, ask: opts.ask });
    });
    return {
      interruptId: it.id,
      bodies,
      batch: true,
      answer: (records) => ({
        decisions: records.map((q, i): HITLDecision => {
          const o = approvalOutcome(q);
          if (!o.approved) return { type: "reject", message: o.reason };
          if (o.edited) return { type: "edit", editedAction: { name: v.actionRequests[i].name, args: o.input ?? {} } };
          return { type: "approve" };
        }),
      }),
    };
  }
  // Any other interrupt value: an open-ended question with its JSON as context.
  const text = typeof v === "string" ? v : JSON.stringify(v);
  return { interruptId: it.id, bodies: [withResume({ ...opts.ask, question: text.slice(0, 2000) || "The agent is waiting for you", run_id: key, idempotency_key: key })], batch: false, answer: (r) => r[0].response ?? "" };
}

// The plans of one step's interrupts.
function plans(its: readonly GraphInterrupt[], threadId: string, opts: DriverOptions): Planned[] {
  const run = turnRunId(threadId, its.map((it) => it.id ?? ""));
  return its.map((it) => plan(it, threadId, run, opts));
}

// Asks a step: every approval of every interrupt in one batch, each
// question on its own; each plan's records in the order of its bodies.
async function askStep(bridge: AskBridge, ps: readonly Planned[]): Promise<Question[][]> {
  const batched = ps.filter((p) => p.batch).flatMap((p) => p.bodies);
  const [asked, alone] = await Promise.all([askApprovals(bridge, batched), Promise.all(ps.filter((p) => !p.batch).map((p) => Promise.all(p.bodies.map((b) => bridge.ask(b)))))]);
  let i = 0;
  let j = 0;
  return ps.map((p) => (p.batch ? p.bodies.map(() => asked[i++]!) : alone[j++]!));
}

function threadOf(config: ThreadConfig, opts: DriverOptions): string {
  const t = opts.threadId ?? (config.configurable?.thread_id as string | undefined);
  if (!t) throw new Error("askbridge: the graph needs a thread_id (config.configurable.thread_id) and a checkpointer to be resumed");
  return t;
}

/** A compiled graph: invoke and getState are all the driver uses. `I` is what invoke takes, `O` what it returns. */
export interface Invokable<I = any, O = any> {
  invoke(input: I, config?: any): Promise<O>;
  getState(config: any): Promise<{ tasks: readonly { interrupts?: readonly GraphInterrupt[] }[] }>;
}

/** The thread's config: `configurable.thread_id` names the thread. */
export interface ThreadConfig {
  configurable?: Record<string, unknown>;
}

function interruptsOf(result: unknown): GraphInterrupt[] {
  const its = (result as { __interrupt__?: unknown } | null | undefined)?.__interrupt__;
  return Array.isArray(its) ? (its as GraphInterrupt[]) : [];
}

async function pendingInterrupts(graph: Invokable, config: ThreadConfig): Promise<GraphInterrupt[]> {
  const state = await graph.getState(config);
  return state.tasks.flatMap((t) => t.interrupts ?? []);
}

/**
 * Blocking: invokes the graph and answers every interrupt through askbridge
 * until it finishes; returns the final state (what `graph.invoke` returns).
 * When the thread is already waiting on interrupts (a process that stopped
 * while people decide, run again with the same thread and a checkpointer
 * that outlives it), it re-attaches to their questions (idempotency key
 * `<thread id>:<interrupt id>`) instead of starting the graph again.
 */
export async function runWithAskbridge<I, O>(bridge: AskBridge, graph: Invokable<I, O>, input: I, config: ThreadConfig, opts: DriverOptions & WaitOptions = {}): Promise<O> {
  const threadId = threadOf(config, opts);
  const waiting = await pendingInterrupts(graph, config);
  let result: unknown = waiting.length ? { __interrupt__: waiting } : await graph.invoke(input, config);
  for (;;) {
    const its = interruptsOf(result);
    if (its.length === 0) return result as O;
    const ps = plans(its, threadId, opts);
    const asked = await askStep(bridge, ps);
    const final = await waitApprovals(bridge, asked.flat(), opts);
    const resume: Record<string, unknown> = {};
    let k = 0;
    for (const p of ps) resume[p.interruptId] = p.answer(p.bodies.map(() => final[k++]!));
    result = await graph.invoke(new Command({ resume }) as I, config);
  }
}

/**
 * Durable: asks every interrupt of `result` (what graph.invoke returned)
 * with resume.url, the approvals as one batch in one request, and reports
 * the runs paused.
 */
export async function askInterrupts(bridge: AskBridge, result: unknown, config: ThreadConfig, opts: DriverOptions & { resumeUrl: string }): Promise<Question[]> {
  const threadId = threadOf(config, opts);
  const its = interruptsOf(result);
  if (its.length === 0) return [];
  const out = (await askStep(bridge, plans(its, threadId, opts))).flat();
  for (const run of new Set(out.map((q) => q.run_id))) await bridge.pauseRun(run);
  return out;
}

/**
 * Durable, on a resume webhook (any process with the same checkpointer):
 * reads the thread's pending interrupts with getState and, when every one
 * is decided and `event` is the last to be decided, returns the Command to
 * invoke the graph with, each interrupt resumed with its own decision;
 * otherwise undefined, so the graph resumes exactly once.
 */
export async function resumeCommand(bridge: AskBridge, graph: Invokable, config: ThreadConfig, event: WebhookEvent, opts: DriverOptions = {}): Promise<Command<unknown, never, never> | undefined> {
  const threadId = threadOf(config, opts);
  const its = await pendingInterrupts(graph, config);
  if (its.length === 0) return undefined;
  const ps = plans(its, threadId, opts);
  const calls = await turnRecords(bridge, turnRunId(threadId, its.map((it) => it.id ?? "")));
  const resume: Record<string, unknown> = {};
  const all: Question[] = [];
  for (const p of ps) {
    const records: Question[] = [];
    for (const b of p.bodies) {
      const q = p.batch ? calls.get(b.action?.call_id ?? "") : (await bridge.list({ runId: b.run_id as string })).at(-1);
      if (!q || q.status === "pending") return undefined;
      records.push(q);
    }
    all.push(...records);
    resume[p.interruptId] = p.answer(records);
  }
  if (!lastDecided(all, event.question.id)) return undefined;
  return new Command({ resume });
}
