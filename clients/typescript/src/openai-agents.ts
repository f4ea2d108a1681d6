// askbridge/openai-agents: the OpenAI Agents SDK's (@openai/agents 0.20.x)
// tool approvals answered by people through askbridge. Each of
// `result.interruptions` becomes one approval keyed by its call id (run
// `<runId>:<callId>`, the same idempotency key), so several pending
// approvals are never confused. The answer calls `state.approve(item,
// {alwaysApprove})` or `state.reject(item, {message})` with the person's
// note, or why nobody decided (expiry and dismissal never approve). The SDK
// cannot run edited arguments, so Edit is never offered.
//
// Blocking: `result = await run(agent, await decideInterruptions(bridge, result, {runId}))`.
// Durable: `await askInterruptions(bridge, result, {runId, resumeUrl, save})` and
// exit; on each resume webhook, `const state = await resumeInterruptions(bridge,
// agent, event, {runId, load})` and, when it is not undefined, `run(agent, state)`.

import { RunState, type Agent } from "@openai/agents";
import { AskBridge, approvalBody, approvalOutcome, lastDecided, type AskBody, type ApprovalOutcome, type Question, type WaitOptions, type WebhookEvent } from "./index.js";

/** What the SDK puts in `result.interruptions` (a RunToolApprovalItem). */
export interface ApprovalItem {
  type: string;
  rawItem: { callId?: string; id?: string; name?: string; arguments?: string; [k: string]: unknown };
  name?: string;
  arguments?: string;
}

/** The part of a RunState the helpers use. */
export interface ApprovableState {
  approve(item: never, opts?: { alwaysApprove?: boolean }): void;
  reject(item: never, opts?: { alwaysReject?: boolean; message?: string }): void;
  getInterruptions(): ApprovalItem[];
  toString(): string;
}

/** A run result that stopped on approvals. */
export interface InterruptedResult {
  interruptions?: ApprovalItem[];
  state: ApprovableState;
}

export interface AgentsApprovalOptions {
  /** The conversation these calls belong to. */
  runId: string;
  /** Anything else of the ask: route, targets, responders, timeout, context, agent_id. */
  ask?: AskBody;
  /** Offer "Always allow <tool>" (maps to alwaysApprove). Default true. */
  alwaysAllow?: boolean;
  /** Question text per call (default "Allow <tool>?"). */
  question?: (toolName: string, input: Record<string, unknown>) => string;
}

function callId(item: ApprovalItem): string {
  const id = item.rawItem.callId ?? item.rawItem.id;
  if (!id) throw new Error("askbridge: an interruption without a call id cannot be asked (rawItem.callId is empty)");
  return id;
}

function toolName(item: ApprovalItem): string {
  return item.name ?? item.rawItem.name ?? "tool";
}

function input(item: ApprovalItem): Record<string, unknown> {
  const raw = item.arguments ?? item.rawItem.arguments ?? "{}";
  try {
    const v = JSON.parse(raw);
    return v && typeof v === "object" && !Array.isArray(v) ? v : { arguments: v };
  } catch {
    return { arguments: raw };
  }
}

function body(item: ApprovalItem, opts: AgentsApprovalOptions, resumeUrl?: string): AskBody {
  return approvalBody({
    runId: opts.runId,
    callId: callId(item),
    tool: toolName(item),
    input: input(item),
    question: opts.question?.(toolName(item), input(item)),
    allowEdit: false, // the SDK runs the arguments the model gave
    alwaysAllow: opts.alwaysAllow ?? true,
    resumeUrl,
    ask: opts.ask,
  });
}

function apply(state: ApprovableState, item: ApprovalItem, o: ApprovalOutcome): void {
  if (o.approved) state.approve(item as never, { alwaysApprove: o.always });
  else state.reject(item as never, { message: o.reason });
}

/**
 * Blocking mode: asks every interruption (in parallel, each its own
 * approval), waits for the people, applies each decision to the run state
 * and returns it for `run(agent, state)`.
 */
export async function decideInterruptions<S extends ApprovableState>(bridge: AskBridge, result: { interruptions?: ApprovalItem[]; state: S }, opts: AgentsApprovalOptions & WaitOptions): Promise<S> {
  const items = result.interruptions ?? [];
  const outcomes = await Promise.all(items.map(async (it) => approvalOutcome(await bridge.askAndWait(body(it, opts), opts))));
  items.forEach((it, i) => apply(result.state, it, outcomes[i]));
  return result.state;
}

/**
 * Durable mode, before exiting: saves `state.toString()` where the app says
 * (first, so a fast answer never finds nothing to resume), then asks every
 * interruption with resume.url and reports each run paused.
 */
export async function askInterruptions(bridge: AskBridge, result: InterruptedResult, opts: AgentsApprovalOptions & { resumeUrl: string; save: (state: string) => Promise<void> | void }): Promise<Question[]> {
  await opts.save(result.state.toString());
  const out: Question[] = [];
  for (const it of result.interruptions ?? []) {
    const q = await bridge.ask(body(it, opts, opts.resumeUrl));
    await bridge.pauseRun(q.run_id);
    out.push(q);
  }
  return out;
}

/**
 * Durable mode, on a resume webhook (any process): restores the saved state
 * with RunState.fromString and, when every interruption is decided and
 * `event` is the last of them to be decided, applies the decisions and
 * returns the state for `run(agent, state)`; otherwise undefined (another
 * webhook continues the run), so the run continues exactly once.
 */
export async function resumeInterruptions<TContext, TAgent extends Agent<TContext, any>>(
  bridge: AskBridge,
  agent: TAgent,
  event: WebhookEvent,
  opts: AgentsApprovalOptions & { load: () => Promise<string> | string },
): Promise<RunState<TContext, TAgent> | undefined> {
  const state = await RunState.fromString(agent, await opts.load());
  const items = state.getInterruptions() as unknown as ApprovalItem[];
  const records: Question[] = [];
  for (const it of items) {
    const q = (await bridge.list({ runId: `${opts.runId}:${callId(it)}` })).at(-1);
    if (!q || q.status === "pending") return undefined;
    records.push(q);
  }
  if (!lastDecided(records, event.question.id)) return undefined;
  items.forEach((it, i) => apply(state as unknown as ApprovableState, it, approvalOutcome(records[i])));
  return state as RunState<TContext, TAgent>;
}
