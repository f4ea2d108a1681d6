// Approvals: the ask body of one tool call and what its final record means
// for the agent. Shared by the framework integrations.

import { AskBridgeError, type AskBridge, type WaitOptions } from "./index.js";
import type { AskAction, AskBody, BatchBody, BatchCall, Person, Question, Status } from "./types.js";

/** One tool call to put before a person. */
export interface ApprovalRequest<I extends object = Record<string, unknown>> {
  /** The agent run the call belongs to (the helpers use one run per turn: turnRunId). */
  runId: string;
  /** The tool call's id (`action.call_id`): it keys the approval in its run, so each call is its own approval and asking again re-attaches. */
  callId: string;
  tool: string;
  input?: I;
  /** The question shown (default "Allow <tool>?"). */
  question?: string;
  /** Offer "Edit" only when the runtime can run edited arguments (default false). */
  allowEdit?: boolean;
  /** Offer "Always allow <tool>" (answered with rule 0). */
  alwaysAllow?: boolean;
  /** Webhook mode: where the bridge POSTs the resume webhook. */
  resumeUrl?: string;
  /** Anything else of the ask (route, targets, responders, timeout, context, agent_id…). */
  ask?: AskBody;
}

/** The ask body of one approval: run `runId`, the call keyed by `action.call_id`. */
export function approvalBody(req: ApprovalRequest<object>): AskBody {
  const action: AskAction = { tool: req.tool, input: { ...req.input }, allow_edit: req.allowEdit ?? false, call_id: req.callId };
  if (req.alwaysAllow) action.suggestions = [{ type: "always_allow", tool: req.tool }];
  const body: AskBody = {
    ...req.ask,
    kind: "approval",
    run_id: req.runId,
    question: req.question ?? `Allow ${req.tool}?`,
    options: [{ label: "Allow" }, { label: "Deny" }],
    action,
  };
  delete body.idempotency_key; // the call id keys it
  if (req.resumeUrl) body.resume = { url: req.resumeUrl };
  return body;
}

/**
 * The run of one turn's parallel tool calls: `<runId>:<smallest call id>`.
 * The same calls give the same run (a process asking again re-attaches);
 * the next turn, with other call ids, is a run of its own, so a run a
 * decision resumed is never asked in again.
 */
export function turnRunId(runId: string, callIds: readonly string[]): string {
  if (callIds.length === 0) return runId;
  return `${runId}:${[...callIds].sort()[0]}`;
}

// What a batch takes at its top (shared by every call) and per call.
const sharedFields = ["run_id", "agent_id", "agent_name", "parent_run_id", "targets", "route", "responders", "timeout", "resume", "requested_by"] as const;
const callFields = ["question", "header", "options", "context", "idempotency_key", "action"] as const;

function canonical(v: unknown): string {
  return JSON.stringify(v, (_k, x) => (x && typeof x === "object" && !Array.isArray(x) ? Object.fromEntries(Object.entries(x).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) : x));
}

/**
 * The approval-batches body of several approvals of one run, or undefined
 * when they cannot go in one batch: an ask field a batch does not take
 * (approvals_required, on_timeout, questions[]…), or shared fields (run,
 * targets, route, timeout…) that differ between calls.
 */
export function batchBody(bodies: readonly AskBody[]): BatchBody | undefined {
  if (bodies.length === 0 || bodies.length > 50) return undefined;
  const known = new Set<string>([...sharedFields, ...callFields, "kind"]);
  for (const b of bodies) {
    if (b.kind !== "approval" || Object.keys(b).some((k) => !known.has(k) && (b as Record<string, unknown>)[k] !== undefined)) return undefined;
  }
  const top: Record<string, unknown> = {};
  for (const f of sharedFields) {
    const v = bodies[0]![f];
    if (bodies.some((b) => canonical(b[f]) !== canonical(v))) return undefined;
    if (v !== undefined) top[f] = v;
  }
  const sameContext = bodies.every((b) => b.context === bodies[0]!.context);
  if (sameContext && bodies[0]!.context !== undefined) top.context = bodies[0]!.context;
  const approvals = bodies.map((b) => {
    const c: BatchCall = {};
    for (const f of callFields) if (b[f] !== undefined && !(f === "context" && sameContext)) (c as Record<string, unknown>)[f] = b[f];
    return c;
  });
  return { ...(top as Omit<BatchBody, "approvals">), approvals };
}

/**
 * Asks the approvals of one turn (approvalBody's, one run) as one batch in
 * one request, and returns their records in order (a call asked before
 * comes back as its record, whatever its state). Approvals that cannot go
 * in one batch (batchBody) are asked one by one, side by side: with their
 * call ids in one run they still form one batch for the people who decide.
 */
export async function askApprovals(bridge: AskBridge, bodies: readonly AskBody[], opts: { signal?: AbortSignal } = {}): Promise<Question[]> {
  if (bodies.length === 0) return [];
  const batch = batchBody(bodies);
  if (batch) return (await bridge.askApprovalBatch(batch, opts)).calls;
  return Promise.all(bodies.map((b) => bridge.ask(b, opts)));
}

/**
 * Waits until every one of `records` is final and returns them in order:
 * one batch wait per batch, a question's own wait for a record outside any.
 */
export async function waitApprovals(bridge: AskBridge, records: readonly Question[], opts: WaitOptions = {}): Promise<Question[]> {
  const final = new Map<string, Question>();
  const batches = new Set<string>();
  const alone: Question[] = [];
  for (const q of records) {
    if (q.status !== "pending") final.set(q.id, q);
    else if (q.batch_id) batches.add(q.batch_id);
    else alone.push(q);
  }
  await Promise.all([
    ...[...batches].map(async (id) => {
      for (const q of (await bridge.waitApprovalBatch(id, opts)).questions) final.set(q.id, q);
    }),
    ...alone.map(async (q) => final.set(q.id, await bridge.wait(q.id, opts))),
  ]);
  return Promise.all(records.map(async (q) => final.get(q.id) ?? bridge.wait(q.id, opts)));
}

/**
 * The records of a turn's calls, by call id, as the bridge has them now
 * (the run's questions, latest per call); a call never asked is missing.
 */
export async function turnRecords(bridge: AskBridge, turnRun: string): Promise<Map<string, Question>> {
  const out = new Map<string, Question>();
  for (const q of await bridge.list({ runId: turnRun })) if (q.action?.call_id) out.set(q.action.call_id, q);
  return out;
}

/**
 * What a final approval record means for the agent: approved with the
 * arguments to run (typed as the tool's input `I`; a person's edit is an
 * object the bridge does not check against the tool's schema), or denied
 * with why. Expiry and dismissal never approve.
 */
export type ApprovalOutcome<I = Record<string, unknown>> =
  | {
      approved: true;
      /** The arguments to run with (a person's edit, or the original). */
      input: I;
      edited: boolean;
      /** The person chose "always allow". */
      always: boolean;
      reason?: undefined;
      status: Status;
      question: Question;
    }
  | {
      approved: false;
      input?: undefined;
      edited: false;
      always: false;
      /** Why it was denied: the person's note, "nobody answered within 30 min", "dismissed by maria: …". */
      reason: string;
      status: Status;
      question: Question;
    };

/** "30 min", "2 h", "1 h 30 min", "45 s". */
export function formatDuration(ms: number): string {
  let s = Math.max(0, Math.round(ms / 1000));
  const h = Math.floor(s / 3600);
  s -= h * 3600;
  const m = Math.floor(s / 60);
  s -= m * 60;
  const parts: string[] = [];
  if (h) parts.push(`${h} h`);
  if (m) parts.push(`${m} min`);
  if (s || parts.length === 0) parts.push(`${s} s`);
  return parts.join(" ");
}

function who(p?: Person): string {
  return p?.name || p?.id || "someone";
}

/** Reads a final approval record; a pending one is an error. Fails closed. */
export function approvalOutcome<I = Record<string, unknown>>(q: Question): ApprovalOutcome<I> {
  const no = (reason: string): ApprovalOutcome<I> => ({ approved: false, edited: false, always: false, reason, status: q.status, question: q });
  switch (q.status) {
    case "answered": {
      const d = q.decision;
      if (d?.behavior === "allow") {
        return { approved: true, input: (d.input ?? q.action?.input ?? {}) as I, edited: !!d.edited, always: (d.rules?.length ?? 0) > 0, status: q.status, question: q };
      }
      if (d) return no(d.message || `denied by ${who(q.responded_by)}`);
      return no(q.reason || `the answer was not an approval: ${q.response ?? ""}`);
    }
    case "expired":
      return no(`nobody answered within ${formatDuration(Date.parse(q.expires_at) - Date.parse(q.created_at))}`);
    case "cancelled": {
      const note = q.cancel_note ? `: ${q.cancel_note}` : "";
      if (q.cancel_reason === "user") return no(`dismissed${q.responded_by ? ` by ${who(q.responded_by)}` : ""}${note}`);
      if (q.cancel_reason === "superseded") return no(`superseded by a newer question of this run${note}`);
      return no(`withdrawn by the agent${note}`);
    }
    default:
      throw new AskBridgeError("pending", `approval ${q.id} is still pending; wait for it before reading the decision`);
  }
}
