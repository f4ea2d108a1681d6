// askbridge/ai: people answer the Vercel AI SDK's (ai 7.x) tool approvals and
// questions through askbridge.
//
// ask_user: `askUserTool(bridge, {runId})` is an AI SDK tool the model calls
// to ask a person; its result is the MCP tool's prose and structured result.
//
// Approvals, in one generateText call: `toolApproval: askbridgeToolApproval(bridge, {runId})`
// asks a person for each tool call and answers the SDK's approval hook
// ('approved', or {type: "denied", reason}).
//
// Approvals as SDK approval requests: the `tool-approval-request`s of one
// step are asked as one batch in one request (run `<runId>:<first call id>`
// for the step, each call keyed by its toolCallId), so a person sees them
// together and may Allow all at once; each call's decision comes back as
// its own `tool-approval-response`, a denial's reason as its reason. The
// AI SDK cannot run edited arguments, so Edit is never offered.
//
// Blocking: `const tool = await decideToolApprovals(bridge, result.content, {runId})`
// then call generateText again with `[...messages, ...result.response.messages, tool]`.
// Durable: `askToolApprovals(..., {resumeUrl})` and exit; on each resume
// webhook, `resumeToolApprovals(bridge, messages, event, {runId})` returns the
// tool message once every approval of the step is decided (exactly once).
// An ask_user call marked 'user-approval' is asked as its question there,
// and approved once answered: the tool then reads the answer.

import { jsonSchema, tool, type ModelMessage, type Tool, type ToolApprovalStatus } from "ai";
import { AskBridge, approvalBody, approvalOutcome, askApprovals, lastDecided, turnRecords, turnRunId, waitApprovals, type AskBody, type Question, type WaitOptions, type WebhookEvent } from "./index.js";
import { ASK_USER, askUser, askUserBody, askUserDescription, askUserInputSchema, type AskUserAnswer, type AskUserInput } from "./ask-user.js";

/** A tool-approval-request part as generateText/streamText return it in `content`. */
export interface ApprovalRequestPart {
  type: "tool-approval-request";
  approvalId: string;
  toolCall: { toolCallId: string; toolName: string; input: unknown };
}

/** The tool message that answers approval requests. */
export interface ApprovalResponseMessage {
  role: "tool";
  content: { type: "tool-approval-response"; approvalId: string; approved: boolean; reason?: string }[];
}

export interface AiApprovalOptions {
  /** The conversation (chat, thread) these calls belong to. */
  runId: string;
  /** Anything else of the ask: route, targets, responders, timeout, context, agent_id. */
  ask?: AskBody;
  /** Offer "Always allow <tool>"; chosen tools are added to this set (keep it with the conversation). */
  alwaysAllowed?: Set<string>;
  /** Webhook mode (durable): where the bridge POSTs the resume webhook. */
  resumeUrl?: string;
  /** Question text per call (default "Allow <tool>?"). */
  question?: (toolName: string, input: unknown) => string;
  /** The name the ask_user tool has in your tools (default "ask_user"): its calls are asked as questions. */
  askUserTool?: string;
}

// The approval requests that wait for a person: not the SDK's automatic
// ones (a toolApproval that said "approved"), not ones answered already.
function requests(content: readonly unknown[]): ApprovalRequestPart[] {
  const answered = new Set(content.filter((p) => (p as { type?: string })?.type === "tool-approval-response").map((p) => (p as { approvalId: string }).approvalId));
  return content.filter((p): p is ApprovalRequestPart => {
    const x = p as { type?: string; isAutomatic?: boolean; approvalId?: string };
    return x?.type === "tool-approval-request" && !x.isAutomatic && !answered.has(x.approvalId ?? "");
  });
}

function asInput(v: unknown): Record<string, unknown> {
  return v && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : { input: v };
}

function isAskUser(toolName: string, opts: AiApprovalOptions): boolean {
  return toolName === (opts.askUserTool ?? ASK_USER);
}

// One call's ask: an ask_user call as its question (run `<runId>:<callId>`),
// any other as an approval in the step's run.
function body(req: ApprovalRequestPart, opts: AiApprovalOptions, run: string): AskBody {
  if (isAskUser(req.toolCall.toolName, opts)) {
    return askUserBody(req.toolCall.input as AskUserInput, { runId: opts.runId, callId: req.toolCall.toolCallId, ask: opts.ask, resumeUrl: opts.resumeUrl });
  }
  return approvalBody({
    runId: run,
    callId: req.toolCall.toolCallId,
    tool: req.toolCall.toolName,
    input: asInput(req.toolCall.input),
    question: opts.question?.(req.toolCall.toolName, req.toolCall.input),
    allowEdit: false, // the AI SDK runs the arguments the model gave
    alwaysAllow: opts.alwaysAllowed !== undefined,
    resumeUrl: opts.resumeUrl,
    ask: opts.ask,
  });
}

// Asks a step's requests: the approvals as one batch, each ask_user call as
// its own question; the records in the order of reqs.
async function askStep(bridge: AskBridge, reqs: ApprovalRequestPart[], opts: AiApprovalOptions, signal?: AbortSignal): Promise<{ run: string; records: Question[] }> {
  const run = turnRunId(opts.runId, reqs.map((r) => r.toolCall.toolCallId));
  const approvals = reqs.filter((r) => !isAskUser(r.toolCall.toolName, opts));
  const [asked, questions] = await Promise.all([
    askApprovals(bridge, approvals.map((r) => body(r, opts, run)), { signal }),
    Promise.all(reqs.filter((r) => isAskUser(r.toolCall.toolName, opts)).map((r) => bridge.ask(body(r, opts, run), { signal }))),
  ]);
  const byCall = new Map<string, Question>();
  approvals.forEach((r, i) => byCall.set(r.toolCall.toolCallId, asked[i]!));
  reqs.filter((r) => isAskUser(r.toolCall.toolName, opts)).forEach((r, i) => byCall.set(r.toolCall.toolCallId, questions[i]!));
  return { run, records: reqs.map((r) => byCall.get(r.toolCall.toolCallId)!) };
}

// An ask_user call is approved once its question is final: the tool then
// re-attaches to it and gives the model the answer (or why there is none).
function response(approvalId: string, q: Question, toolName: string, opts: AiApprovalOptions): ApprovalResponseMessage["content"][number] {
  if (isAskUser(toolName, opts)) return { type: "tool-approval-response", approvalId, approved: true };
  const o = approvalOutcome(q);
  if (o.approved && o.always) opts.alwaysAllowed?.add(toolName);
  return o.approved ? { type: "tool-approval-response", approvalId, approved: true } : { type: "tool-approval-response", approvalId, approved: false, reason: o.reason };
}

/**
 * Blocking mode: asks every approval request of `content` as one batch (one
 * request; ask_user calls as their questions), waits until each call is
 * decided, and returns the tool message to append, each call with its own
 * decision; undefined when there was nothing to approve. Asking the same
 * step again re-attaches to its calls.
 */
export async function decideToolApprovals(bridge: AskBridge, content: readonly unknown[], opts: AiApprovalOptions & WaitOptions): Promise<ApprovalResponseMessage | undefined> {
  const reqs = requests(content);
  if (reqs.length === 0) return undefined;
  const { records } = await askStep(bridge, reqs, opts, opts.signal);
  const final = await waitApprovals(bridge, records, opts);
  return { role: "tool", content: reqs.map((r, i) => response(r.approvalId, final[i]!, r.toolCall.toolName, opts)) };
}

/**
 * Durable mode, before exiting: asks every approval request of `content`
 * with resume.url as one batch (one request; ask_user calls as their
 * questions) and reports the runs paused, so a decision resumes them.
 * Returns the records in the order of the requests.
 */
export async function askToolApprovals(bridge: AskBridge, content: readonly unknown[], opts: AiApprovalOptions & { resumeUrl: string }): Promise<Question[]> {
  const reqs = requests(content);
  if (reqs.length === 0) return [];
  const { records } = await askStep(bridge, reqs, opts);
  for (const run of new Set(records.map((q) => q.run_id))) await bridge.pauseRun(run);
  return records;
}

/** The approval requests in `messages` that no tool-approval-response answers yet. */
export function openApprovalRequests(messages: readonly ModelMessage[]): ApprovalRequestPart[] {
  const calls = new Map<string, { toolName: string; input: unknown }>();
  const asked: { approvalId: string; toolCallId: string }[] = [];
  const answered = new Set<string>();
  for (const m of messages) {
    if (!Array.isArray(m.content)) continue;
    for (const p of m.content as { type: string; [k: string]: unknown }[]) {
      if (p.type === "tool-call") calls.set(p.toolCallId as string, { toolName: p.toolName as string, input: p.input });
      if (p.type === "tool-approval-request" && !p.isAutomatic) asked.push({ approvalId: p.approvalId as string, toolCallId: (p.toolCallId ?? (p.toolCall as { toolCallId: string })?.toolCallId) as string });
      if (p.type === "tool-approval-response") answered.add(p.approvalId as string);
    }
  }
  return asked
    .filter((a) => !answered.has(a.approvalId) && calls.has(a.toolCallId))
    .map((a) => ({ type: "tool-approval-request", approvalId: a.approvalId, toolCall: { toolCallId: a.toolCallId, ...calls.get(a.toolCallId)! } }));
}

/**
 * Durable mode, on a resume webhook (any process): when every open
 * approval of `messages` is decided and `event` is the last of them to be
 * decided, returns the tool message to append before calling generateText
 * again; otherwise undefined (another webhook continues the step), so a
 * step continues exactly once however the webhooks interleave.
 */
export async function resumeToolApprovals(bridge: AskBridge, messages: readonly ModelMessage[], event: WebhookEvent, opts: AiApprovalOptions): Promise<ApprovalResponseMessage | undefined> {
  const open = openApprovalRequests(messages);
  if (open.length === 0) return undefined;
  const calls = await turnRecords(bridge, turnRunId(opts.runId, open.map((r) => r.toolCall.toolCallId)));
  const records: Question[] = [];
  for (const r of open) {
    const q = isAskUser(r.toolCall.toolName, opts) ? (await bridge.list({ runId: `${opts.runId}:${r.toolCall.toolCallId}` })).at(-1) : calls.get(r.toolCall.toolCallId);
    if (!q || q.status === "pending") return undefined;
    records.push(q);
  }
  if (!lastDecided(records, event.question.id)) return undefined;
  return { role: "tool", content: open.map((r, i) => response(r.approvalId, records[i]!, r.toolCall.toolName, opts)) };
}

/**
 * A `toolApproval` setting for generateText/streamText: tools a person
 * chose to always allow are approved without asking; every other tool call
 * asks ('user-approval').
 */
export function toolApprovalFor(alwaysAllowed: Set<string>): (o: { toolCall: { toolName: string } }) => ToolApprovalStatus {
  return ({ toolCall }) => (alwaysAllowed.has(toolCall.toolName) ? "approved" : "user-approval");
}

export interface AskUserToolOptions {
  /** The conversation (chat, thread) the calls belong to: each call asks as run `<runId>:<toolCallId>`. */
  runId: string;
  /** Anything else of the ask: route, targets, responders, timeout, context, agent_id. */
  ask?: AskBody;
  /** How long to wait (timeoutMs) and the long-poll length; the SDK's abort signal stops the wait. */
  wait?: Omit<WaitOptions, "signal">;
  /** What the model reads about the tool (default: the MCP tool's description). */
  description?: string;
}

/**
 * The ask_user tool for generateText/streamText: the model asks 1-4
 * questions, a person answers in Slack, Discord or the web inbox, and the
 * model reads the MCP tool's prose and structured result (the tool's output
 * is that {text, result, isError}). Blocking: the call waits for the answer.
 * Durable: mark it 'user-approval' in toolApproval; askToolApprovals asks
 * its question with resume.url, resumeToolApprovals approves it once
 * answered, and the call then reads the answer without asking again.
 */
export function askUserTool(bridge: AskBridge, opts: AskUserToolOptions): Tool<AskUserInput, AskUserAnswer> {
  return tool({
    description: opts.description ?? askUserDescription,
    inputSchema: jsonSchema<AskUserInput>(askUserInputSchema()),
    execute: (input: AskUserInput, { toolCallId, abortSignal }): Promise<AskUserAnswer> => askUser(bridge, input, { runId: opts.runId, callId: toolCallId, ask: opts.ask }, { ...opts.wait, signal: abortSignal }),
    toModelOutput: ({ output }: { output: AskUserAnswer }) => ({ type: "content", value: [{ type: "text", text: output.text }, { type: "text", text: JSON.stringify(output.result) }] }),
  });
}

/**
 * The AI SDK's approval hook answered by people: `toolApproval:
 * askbridgeToolApproval(bridge, {runId})` asks a person for each tool call
 * while generateText waits, and answers 'approved' or {type: "denied",
 * reason}: one generateText call, no message splicing. Each call is an
 * approval in run `runId` keyed by its toolCallId: the calls of one step,
 * asked within the bridge's batch window, reach people as one batch.
 * ask_user calls are not approvals ('not-applicable'); tools in
 * `alwaysAllowed` are approved without asking, and "always allow" adds to
 * it. `tools` limits asking to those tools.
 */
export function askbridgeToolApproval(bridge: AskBridge, opts: Omit<AiApprovalOptions, "resumeUrl"> & WaitOptions & { tools?: readonly string[] }): (o: { toolCall: { toolCallId: string; toolName: string; input: unknown } }) => Promise<ToolApprovalStatus> {
  return async ({ toolCall }) => {
    if (isAskUser(toolCall.toolName, opts)) return "not-applicable";
    if (opts.tools && !opts.tools.includes(toolCall.toolName)) return "not-applicable";
    if (opts.alwaysAllowed?.has(toolCall.toolName)) return "approved";
    const req: ApprovalRequestPart = { type: "tool-approval-request", approvalId: toolCall.toolCallId, toolCall };
    const o = approvalOutcome(await bridge.askAndWait(body(req, opts, opts.runId), opts));
    if (!o.approved) return { type: "denied", reason: o.reason };
    if (o.always) opts.alwaysAllowed?.add(toolCall.toolName);
    return "approved";
  };
}
