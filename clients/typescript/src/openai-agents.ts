// askbridge/openai-agents: the OpenAI Agents SDK's (@openai/agents 0.20.x)
// tool approvals answered by people through askbridge. The
// `result.interruptions` of one turn are asked as one batch in one request
// (run `<runId>:<first call id>` for the turn, each approval keyed by its
// call id), so a person sees them together and may Allow all at once, and
// several pending approvals are never confused. Each call's decision calls
// `state.approve(item, {alwaysApprove})` or `state.reject(item, {message})`
// with the person's note, or why nobody decided (expiry and dismissal never
// approve). The SDK cannot run edited arguments, so Edit is never offered.
//
// Blocking: `result = await run(agent, await decideInterruptions(bridge, result, {runId}))`.
// Durable: `await askInterruptions(bridge, result, {runId, resumeUrl, save})` and
// exit; on each resume webhook, `const state = await resumeInterruptions(bridge,
// agent, event, {runId, load})` and, when it is not undefined, `run(agent, state)`.

//
// ask_user: `askUserTool(bridge, {runId})` is an Agents SDK tool the model
// calls to ask a person; its output is the MCP tool's prose and structured
// result. Durable: `askUserTool(bridge, {runId, durable: true})` stops the
// run on the call like an approval; askInterruptions asks its question,
// resumeInterruptions approves it once answered, and the call then reads
// the answer without asking again.

import { RunState, tool, type Agent, type FunctionTool } from "@openai/agents";
import { AskBridge, approvalBody, approvalOutcome, askApprovals, lastDecided, turnRecords, turnRunId, waitApprovals, type AskBody, type Question, type WaitOptions, type WebhookEvent } from "./index.js";
import { ASK_USER, askUser, askUserBody, askUserDescription, askUserInputSchema, type AskUserInput } from "./ask-user.js";

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
  /** The name of the ask_user tool (default "ask_user"): its calls are asked as questions. */
  askUserTool?: string;
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

function isAskUser(item: ApprovalItem, opts: AgentsApprovalOptions): boolean {
  return toolName(item) === (opts.askUserTool ?? ASK_USER);
}

// One interruption's ask: an ask_user call as its question (run
// `<runId>:<callId>`), any other as an approval in the turn's run.
function body(item: ApprovalItem, opts: AgentsApprovalOptions, run: string, resumeUrl?: string): AskBody {
  if (isAskUser(item, opts)) return askUserBody(input(item) as unknown as AskUserInput, { runId: opts.runId, callId: callId(item), ask: opts.ask, resumeUrl });
  return approvalBody({
    runId: run,
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

// Asks a turn's interruptions: the approvals as one batch, each ask_user
// call as its own question; the records in the order of items.
async function askTurn(bridge: AskBridge, items: ApprovalItem[], opts: AgentsApprovalOptions, resumeUrl?: string): Promise<Question[]> {
  const run = turnRunId(opts.runId, items.map(callId));
  const approvals = items.filter((it) => !isAskUser(it, opts));
  const questions = items.filter((it) => isAskUser(it, opts));
  const [asked, answered] = await Promise.all([
    askApprovals(bridge, approvals.map((it) => body(it, opts, run, resumeUrl))),
    Promise.all(questions.map((it) => bridge.ask(body(it, opts, run, resumeUrl)))),
  ]);
  const byCall = new Map<string, Question>();
  approvals.forEach((it, i) => byCall.set(callId(it), asked[i]!));
  questions.forEach((it, i) => byCall.set(callId(it), answered[i]!));
  return items.map((it) => byCall.get(callId(it))!);
}

// An ask_user call is approved once its question is final: the tool then
// re-attaches to it and gives the model the answer (or why there is none).
function apply(state: ApprovableState, item: ApprovalItem, q: Question, opts: AgentsApprovalOptions): void {
  if (isAskUser(item, opts)) return state.approve(item as never);
  const o = approvalOutcome(q);
  if (o.approved) state.approve(item as never, { alwaysApprove: o.always });
  else state.reject(item as never, { message: o.reason });
}

/**
 * Blocking mode: asks every interruption as one batch (one request),
 * waits until each call is decided, applies each decision to its own call
 * in the run state and returns it for `run(agent, state)`. Asking the same
 * interruptions again re-attaches to their calls.
 */
export async function decideInterruptions<S extends ApprovableState>(bridge: AskBridge, result: { interruptions?: ApprovalItem[]; state: S }, opts: AgentsApprovalOptions & WaitOptions): Promise<S> {
  const items = result.interruptions ?? [];
  const records = await waitApprovals(bridge, await askTurn(bridge, items, opts), opts);
  items.forEach((it, i) => apply(result.state, it, records[i]!, opts));
  return result.state;
}

/**
 * Durable mode, before exiting: saves `state.toString()` where the app says
 * (first, so a fast answer never finds nothing to resume), then asks every
 * interruption with resume.url as one batch and reports the runs paused.
 */
export async function askInterruptions(bridge: AskBridge, result: InterruptedResult, opts: AgentsApprovalOptions & { resumeUrl: string; save: (state: string) => Promise<void> | void }): Promise<Question[]> {
  await opts.save(result.state.toString());
  const items = result.interruptions ?? [];
  if (items.length === 0) return [];
  const records = await askTurn(bridge, items, opts, opts.resumeUrl);
  for (const run of new Set(records.map((q) => q.run_id))) await bridge.pauseRun(run);
  return records;
}

/**
 * Durable mode, on a resume webhook (any process): restores the saved state
 * with RunState.fromString and, when every interruption is decided and
 * `event` is the last of them to be decided, applies each decision to its
 * call and returns the state for `run(agent, state)`; otherwise undefined
 * (another webhook continues the run), so the run continues exactly once.
 */
export async function resumeInterruptions<TContext, TAgent extends Agent<TContext, any>>(
  bridge: AskBridge,
  agent: TAgent,
  event: WebhookEvent,
  opts: AgentsApprovalOptions & { load: () => Promise<string> | string },
): Promise<RunState<TContext, TAgent> | undefined> {
  const state = await RunState.fromString(agent, await opts.load());
  const items = state.getInterruptions() as unknown as ApprovalItem[];
  if (items.length === 0) return undefined;
  const calls = await turnRecords(bridge, turnRunId(opts.runId, items.map(callId)));
  const records: Question[] = [];
  for (const it of items) {
    const q = isAskUser(it, opts) ? (await bridge.list({ runId: `${opts.runId}:${callId(it)}` })).at(-1) : calls.get(callId(it));
    if (!q || q.status === "pending") return undefined;
    records.push(q);
  }
  if (!lastDecided(records, event.question.id)) return undefined;
  items.forEach((it, i) => apply(state as unknown as ApprovableState, it, records[i]!, opts));
  return state as RunState<TContext, TAgent>;
}

export interface AskUserToolOptions {
  /** The conversation the calls belong to: each call asks as run `<runId>:<callId>`. */
  runId: string;
  /** Anything else of the ask: route, targets, responders, timeout, context, agent_id. */
  ask?: AskBody;
  /** How long to wait (timeoutMs) and the long-poll length. */
  wait?: Omit<WaitOptions, "signal">;
  /** Durable mode: the run stops on each call (an interruption) until its question is answered. */
  durable?: boolean;
  /** The tool's name (default "ask_user"). */
  name?: string;
  /** What the model reads about the tool (default: the MCP tool's description). */
  description?: string;
}

/** The JSON schema of the ask_user tool's parameters. */
export type AskUserParameters = ReturnType<typeof askUserInputSchema> & { additionalProperties: true };

/**
 * The ask_user tool for an Agent: the model asks 1-4 questions, a person
 * answers in Slack, Discord or the web inbox, and the model reads the MCP
 * tool's prose followed by its structured result as JSON.
 */
export function askUserTool(bridge: AskBridge, opts: AskUserToolOptions): FunctionTool<unknown, AskUserParameters, unknown> {
  return tool({
    name: opts.name ?? ASK_USER,
    description: opts.description ?? askUserDescription,
    // Not strict: OpenAI's strict mode wants every property required.
    parameters: { ...askUserInputSchema(), additionalProperties: true as const },
    strict: false,
    needsApproval: opts.durable ?? false,
    execute: async (input, _ctx, details) => {
      const id = details?.toolCall?.callId;
      if (!id) throw new Error("askbridge: ask_user was called without a call id (details.toolCall.callId)");
      const a = await askUser(bridge, input as AskUserInput, { runId: opts.runId, callId: id, ask: opts.ask }, { ...opts.wait, signal: details?.signal });
      return `${a.text}\n\n${JSON.stringify(a.result)}`;
    },
  });
}
