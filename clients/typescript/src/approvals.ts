// Approvals: the ask body of one tool call and what its final record means
// for the agent. Shared by the framework integrations.

import { AskBridgeError } from "./index.js";
import type { AskAction, AskBody, Person, Question, Status } from "./types.js";

/** One tool call to put before a person. */
export interface ApprovalRequest<I extends object = Record<string, unknown>> {
  /** The agent run (thread, conversation) the call belongs to. */
  runId: string;
  /** The tool call's id: each call is its own approval (run `<runId>:<callId>`, same idempotency key). */
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

/** The ask body of one approval. */
export function approvalBody(req: ApprovalRequest<object>): AskBody {
  const key = `${req.runId}:${req.callId}`;
  const action: AskAction = { tool: req.tool, input: { ...req.input }, allow_edit: req.allowEdit ?? false };
  if (req.alwaysAllow) action.suggestions = [{ type: "always_allow", tool: req.tool }];
  const body: AskBody = {
    ...req.ask,
    kind: "approval",
    run_id: key,
    idempotency_key: key,
    question: req.question ?? `Allow ${req.tool}?`,
    options: [{ label: "Allow" }, { label: "Deny" }],
    action,
  };
  if (req.resumeUrl) body.resume = { url: req.resumeUrl };
  return body;
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
