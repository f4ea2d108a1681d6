// The API's request and record types (docs/openapi.yaml of the bridge):
// exact, so a field the API does not take does not compile.

/** A picture shown with an option, an item or the context: https only, with alt text. */
export interface Image {
  url: string;
  alt: string;
}

/** One choice of an item. `value` defaults to `label`. */
export interface Option {
  label: string;
  description?: string;
  value?: string;
  recommended?: boolean;
  /** Pre-selected; `on_timeout.use_defaults` answers with it. */
  default?: boolean;
  /** Resolves an approval that needs several votes at its first vote. */
  veto?: boolean;
  image?: Image;
}

/** Ask an item only when an earlier item's answer includes one of any_of, or none of none_of. */
export interface ShowIf {
  item: number;
  any_of?: string[];
  none_of?: string[];
}

/** Rules free text must satisfy. */
export interface FreeTextRules {
  pattern?: string;
  min_length?: number;
  max_length?: number;
  number?: { min?: number; max?: number; integer?: boolean };
  hint?: string;
}

/** One question of an ask; no options = open-ended (free text). */
export interface Item {
  question: string;
  header?: string;
  multiSelect?: boolean;
  options?: Option[];
  show_if?: ShowIf;
  other?: FreeTextRules;
  image?: Image;
}

/** The tool call an approval asks about, as an ask sends it. */
export interface AskAction<I extends object = Record<string, unknown>> {
  tool: string;
  input?: I;
  /** Optional; must match the digest the bridge computes. */
  digest?: string;
  /** "Always allow" rules a person may pick (answered with `rule`). */
  suggestions?: Record<string, unknown>[];
  /** false: the person is not offered to edit the arguments (the runtime cannot run edited ones). */
  allow_edit?: boolean;
  /**
   * The framework's id of the tool call (the AI SDK's toolCallId, an OpenAI Agents call id, a
   * LangGraph interrupt id). It keys the approval in its run: asking about the same call again
   * returns its record, pending or decided; approvals of distinct calls coexist in a run.
   */
  call_id?: string;
}

/** The tool call an approval decides, as the record carries it. */
export interface Action {
  tool: string;
  input: Record<string, unknown>;
  digest: string;
  /** A unified diff for file edits. */
  diff?: string;
  suggestions?: Record<string, unknown>[];
  allow_edit?: false;
  /** The tool call's id, as the ask gave it. */
  call_id?: string;
}

/** A chat place (Slack, Discord, Telegram) or mail recipients. */
export interface Target {
  platform: "slack" | "discord" | "telegram" | "email";
  channel?: string;
  thread_ts?: string;
  /** email: the addresses mailed. */
  to?: string[];
  /** Telegram's name for channel (request only). */
  chat?: string;
  /** Telegram's forum topic (request only). */
  thread?: number | string;
  /** Set once posted. */
  message_ts?: string;
  url?: string;
  /** Why posting failed, if it did. */
  error?: string;
}

/** Who may answer; empty means anyone who can see the question. */
export interface Responders {
  users?: string[];
  slack_usergroups?: string[];
  discord_roles?: string[];
  telegram_chat_admins?: string[];
  email_domains?: string[];
  pagerduty_schedules?: string[];
  pagerduty_escalation_policies?: string[];
  exclude_requester?: boolean;
}

/** What a question answers with when nobody answers in time. */
export interface OnTimeout {
  answer?: string;
  use_defaults?: boolean;
}

/** The body of an ask: the API's create request, every field it takes and no other. */
export interface AskBody {
  run_id?: string;
  agent_id?: string;
  agent_name?: string;
  parent_run_id?: string;
  kind?: "question" | "approval";
  questions?: Item[];
  question?: string;
  header?: string;
  multiSelect?: boolean;
  options?: Option[];
  other?: FreeTextRules;
  image?: Image;
  /** Markdown shown above the questions. */
  context?: string;
  context_image?: Image;
  targets?: Target[];
  route?: string;
  responders?: Responders;
  /** A duration ("30m") or seconds, from 10 s to 30 days. */
  timeout?: string | number;
  /** Webhook mode: where the resume webhook is sent. */
  resume?: { url: string };
  idempotency_key?: string;
  requested_by?: string;
  approvals_required?: number;
  on_timeout?: OnTimeout;
  action?: AskAction;
}

/** The body of respond (operators): the API's respond request. */
export interface RespondBody {
  response?: string;
  answers?: Record<string, string | string[]>;
  /** Approval with an action: allow it with these arguments instead. */
  edited_input?: Record<string, unknown>;
  /** Approval with an action: also accept action.suggestions[rule]. */
  rule?: number;
  /** The action digest the person saw. */
  digest?: string;
  /** Approval: deny with this reason as the agent's feedback. */
  reason?: string;
  /** Who the answer is for (relay operators, or a bridge without tokens). */
  responded_by?: string | Person;
}

export interface Person {
  platform: string;
  id: string;
  name?: string;
  /** The relay operator that answered for this person through the API. */
  via?: string;
}

/** What an answered approval with an action tells the agent. */
export interface Decision {
  behavior: "allow" | "deny";
  digest: string;
  input?: Record<string, unknown>;
  edited?: boolean;
  rules?: Record<string, unknown>[];
  message?: string;
  auto_rule?: string;
}

/** An item not asked because its show_if was not met. */
export interface Skipped {
  question: string;
  reason: string;
}

/** What was answered the last few times the same agent asked the same items. */
export interface PastAnswer {
  question_id: string;
  answer: string;
  answers?: Record<string, string>;
  selections?: Record<string, string[]>;
  responded_by?: Person;
  responded_at: string;
  defaulted?: boolean;
}

export type Status = "pending" | "answered" | "cancelled" | "expired";

/** A question record, as every endpoint returns it. */
export interface Question {
  id: string;
  project_id: string;
  run_id: string;
  agent_id: string;
  agent_name?: string;
  kind: "question" | "approval";
  status: Status;
  questions: Item[];
  context?: string;
  context_image?: Image;
  targets: Target[];
  responders: Responders;
  answers?: Record<string, string>;
  selections?: Record<string, string[]>;
  response?: string;
  /** The texts of the items whose answer is (or includes) free text. */
  free_text?: string[];
  responded_by?: Person;
  responded_at?: string;
  cancel_reason?: "" | "user" | "agent" | "superseded";
  cancel_note?: string;
  /** An approval denied with a note: the note exactly as typed (the answer is the Deny option). */
  reason?: string;
  created_at: string;
  updated_at: string;
  expires_at: string;
  resumed_run_id?: string;
  resume?: { url?: string };
  route?: string;
  requested_by?: string;
  approvals_required?: number;
  votes?: { by: Person; label: string; at: string }[];
  on_timeout?: OnTimeout;
  /** Answered by on_timeout. */
  defaulted?: boolean;
  skipped?: Skipped[];
  history?: PastAnswer[];
  escalation?: { after: string; remind?: boolean; targets?: Target[]; responders?: Responders; page?: { pager?: string; profile?: string } }[];
  escalation_level?: number;
  remarks?: { kind: string; text: string; by?: string; at: string }[];
  idempotency_key?: string;
  action?: Action;
  decision?: Decision;
  /** The action as a person edited and approved it; action keeps the original. */
  edited_action?: { tool: string; input: Record<string, unknown>; digest: string; by?: Person };
  /** Index in action.suggestions of the "always allow" rule the person chose. */
  applied_rule?: number;
  /** The batch of parallel approvals this approval belongs to (the id of its first approval). */
  batch_id?: string;
  /** Only on the create response: a sentence for the agent's tool result. */
  message?: string;
}

export interface Run {
  id: string;
  project_id: string;
  agent_id: string;
  status: "running" | "paused" | "resumed";
  resumed_from?: string;
  resumed_run_id?: string;
  created_at?: string;
  updated_at?: string;
}

/** One problem of a refused request: the field and what is wrong with it. */
export interface Detail {
  field: string;
  problem: string;
}

/** One tool call of a batch: its action (with call_id), or at least a question. */
export interface BatchCall {
  /** Default "Allow <tool>: <main argument>?". */
  question?: string;
  /** Default "Approval"; at most 12 characters. */
  header?: string;
  /** Default Allow and Deny. */
  options?: Option[];
  /** Markdown shown with this call (after the batch's context). */
  context?: string;
  idempotency_key?: string;
  action?: AskAction;
}

/** The body of askApprovalBatch: what the calls share, and one entry per call (1-50). */
export interface BatchBody {
  run_id?: string;
  agent_id?: string;
  agent_name?: string;
  parent_run_id?: string;
  /** Markdown shown above every call. */
  context?: string;
  targets?: Target[];
  route?: string;
  responders?: Responders;
  /** A duration ("30m") or seconds, from 10 s to 30 days. */
  timeout?: string | number;
  /** Webhook mode: every call's decision is sent here on its own, all naming one continuation run. */
  resume?: { url: string };
  requested_by?: string;
  approvals: BatchCall[];
}

/** A batch of approvals: its calls in the order they were asked. */
export interface Batch {
  batch_id: string;
  project_id: string;
  run_id: string;
  agent_id: string;
  /** "pending" while any call waits for a decision. */
  status: "pending" | "decided";
  /** How many calls wait for a decision. */
  pending: number;
  questions: Question[];
}

/** What askApprovalBatch returns: the batch, this request's calls in its order, and a sentence for the agent. */
export interface BatchAsked extends Batch {
  /** The request's calls in its order; a call asked before is its earlier record, whatever its batch. */
  calls: Question[];
  message: string;
}

/** Allow all or Deny all (operators): the body of respondApprovalBatch. */
export interface BatchRespondBody {
  decision: "allow" | "deny";
  /** Deny only: every denied call gets this reason as the agent's feedback. */
  reason?: string;
  /** Only these calls (the ones the person saw); default every call of the batch. */
  questions?: string[];
  responded_by?: string | Person;
}

/** The batch after Allow all / Deny all, and what became of each call. */
export interface BatchOutcome extends Batch {
  decided: string[];
  voted: string[];
  /** Calls decided before: they keep their decision. */
  already: string[];
  /** Calls left pending, and why. */
  refused: { id: string; code: string; message: string }[];
}
