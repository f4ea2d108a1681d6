// ask_user for agent frameworks: the input the model fills (Claude Code's
// AskUserQuestion shape, as askbridge's MCP tool takes it) and the answer it
// reads back, the same prose and structured result as the MCP tool.

import { AskBridgeError, WaitTimeoutError, validateAsk, type AskBody, type AskBridge, type Item, type Question, type WaitOptions } from "./index.js";

/** The tool's name where a framework needs one. */
export const ASK_USER = "ask_user";

/** What the model reads about the tool (the MCP tool's description). */
export const askUserDescription = `Ask a person on the team a question and wait for their answer. The question is posted where the team works (Slack, Discord or the askbridge web inbox) and this call waits until someone answers, it expires, or it is dismissed.

Use it when you need a decision, preference or piece of information that only a person can give and guessing would risk wasted or harmful work: choosing between approaches, confirming a destructive or costly step, clarifying an ambiguous requirement. Do not use it for things you can find out yourself, or to report progress.

Ask 1-4 related questions in one call. Give each 2-4 short, distinct options with a one-line description of the trade-off, or no options for an open-ended question. Do not add an "Other" option: the person can always answer in their own words instead ("Other" is added automatically). If you recommend an option, put it first and end its label with "(Recommended)".`;

/** One choice the model offers. */
export interface AskUserOption {
  label: string;
  description?: string;
}

/** One question the model asks. */
export interface AskUserItem {
  question: string;
  /** A chip of at most 12 characters. */
  header: string;
  options?: AskUserOption[];
  multiSelect?: boolean;
}

/** The tool's input. */
export interface AskUserInput {
  questions: AskUserItem[];
}

/** The JSON schema of AskUserInput (a fresh copy), for the frameworks' tool definitions. */
export function askUserInputSchema(): { type: "object"; properties: { questions: Record<string, any> }; required: "questions"[]; additionalProperties: boolean } {
  return {
  type: "object",
  properties: {
    questions: {
      type: "array",
      minItems: 1,
      maxItems: 4,
      description: "1-4 questions asked together; the person answers all of them at once.",
      items: {
        type: "object",
        properties: {
          question: { type: "string", minLength: 1, description: "The complete question, ending with a question mark. Include the context the person needs to answer it without reading your conversation." },
          header: { type: "string", minLength: 1, maxLength: 12, description: 'A very short label shown as a chip, at most 12 characters (e.g. "Auth method", "Deploy").' },
          options: {
            type: "array",
            minItems: 2,
            maxItems: 4,
            description: 'Omit for an open-ended question answered in free text. Do not include an "Other" option; it is added automatically.',
            items: {
              type: "object",
              properties: {
                label: { type: "string", minLength: 1, description: 'The text of the choice the person clicks, 1-5 words. Never "Other".' },
                description: { type: "string", description: "What choosing this option means or implies." },
              },
              required: ["label"],
              additionalProperties: false,
            },
          },
          multiSelect: { type: "boolean", description: 'true lets the person choose several options; answers are then joined with ", ".' },
        },
        required: ["question", "header"],
        additionalProperties: false,
      },
    },
  },
  required: ["questions"],
  additionalProperties: false,
  };
}

/** How a call ended, as the MCP tool reports it. */
export type AskUserStatus = "answered" | "expired" | "cancelled" | "pending" | "invalid" | "not_sent";

/** The structured result (the MCP tool's structuredContent). */
export interface AskUserResult {
  status: AskUserStatus;
  /** Each question's text mapped to the chosen label(s), joined with ", ", or the person's own words. */
  answers: Record<string, string>;
  /** The same as lists. */
  selections: Record<string, string[]>;
  question_id?: string;
  /** What to fix when status is invalid. */
  problems?: string[];
}

/** What the model reads: the prose first, then the structured result. */
export interface AskUserAnswer {
  text: string;
  result: AskUserResult;
  /** No answer came (the MCP tool's isError). */
  isError: boolean;
}

/** Where one ask_user call is asked. */
export interface AskUserCall {
  /** The agent run (conversation, thread) the call belongs to. */
  runId: string;
  /** The tool call's id: each call is its own question (run and idempotency key `<runId>:<callId>`). */
  callId: string;
  /** Anything else of the ask: route, targets, responders, timeout, context, agent_id. */
  ask?: AskBody;
  /** Webhook mode: where the bridge POSTs the resume webhook. */
  resumeUrl?: string;
}

const cont = " Continue without the answer: make the safest reasonable choice yourself and tell the user which one you made. Do not ask the same question again.";

function result(status: AskUserStatus, q?: Question): AskUserResult {
  return { status, answers: { ...q?.answers }, selections: { ...q?.selections }, ...(q ? { question_id: q.id } : {}) };
}

/** The API's items for the model's questions. */
export function askUserItems(input: AskUserInput): Item[] {
  return (input?.questions ?? []).map((it) => ({
    question: it.question,
    header: it.header,
    ...(it.multiSelect ? { multiSelect: true } : {}),
    ...(it.options?.length ? { options: it.options.map((o) => ({ label: o.label, ...(o.description ? { description: o.description } : {}) })) } : {}),
  }));
}

/** The ask body of one ask_user call. */
export function askUserBody(input: AskUserInput, call: AskUserCall): AskBody {
  const key = `${call.runId}:${call.callId}`;
  const body: AskBody = {
    ...call.ask,
    run_id: key,
    idempotency_key: key,
    questions: askUserItems(input),
  };
  if (call.resumeUrl) body.resume = { url: call.resumeUrl };
  return body;
}

/** What the model reads of a final record (the MCP tool's text and structured result). */
export function askUserAnswer(q: Question): AskUserAnswer {
  const out = result(q.status, q);
  if (q.status === "answered") {
    const parts = q.questions.map((it) => `${JSON.stringify(it.question)}=${JSON.stringify(q.answers?.[it.question] ?? "")}`);
    return { text: `User has answered your questions: ${parts.join(", ")}. You can now continue with the user's answers in mind.`, result: out, isError: false };
  }
  let text: string;
  if (q.status === "expired") text = `No answer: the question expired at ${new Date(q.expires_at).toISOString().replace(/\.\d+Z$/, "Z")} before anyone answered.`;
  else if (q.status === "cancelled" && q.cancel_reason === "user") text = `${q.responded_by ? q.responded_by.name || `${q.responded_by.platform}:${q.responded_by.id}` : "The user"} dismissed the question without answering.`;
  else if (q.status === "cancelled" && q.cancel_reason === "superseded") text = "No answer: the question was replaced by a newer question of this run.";
  else if (q.status === "cancelled") text = "No answer: the question was withdrawn.";
  else text = `No answer: the question is ${q.status}.`;
  return { text: text + cont, result: out, isError: true };
}

function problemsOf(input: AskUserInput): string[] {
  const ps: string[] = [];
  (input?.questions ?? []).forEach((it, i) => {
    if (!it?.header?.trim()) ps.push(`questions[${i}].header: required, at most 12 characters`);
  });
  return ps;
}

function invalid(problems: string[]): AskUserAnswer {
  return { text: `The question was not sent: ${problems.join("; ")}. Fix these and call ask_user again.`, result: { ...result("invalid"), problems }, isError: true };
}

function notSent(err: unknown): AskUserAnswer {
  const e = err as AskBridgeError;
  if (e instanceof AskBridgeError && e.code === "invalid" && e.details.length) return invalid(e.details.map((d) => `${d.field}: ${d.problem}`));
  const text = e instanceof AskBridgeError && e.code !== "unreachable"
    ? `The question was not sent: ${e.message}. Continue without asking.`
    : `The question was not sent: the askbridge server could not be reached (${(e as Error)?.message ?? String(err)}). Continue without the answer: make the safest reasonable choice yourself and tell the user which one you made.`;
  return { text, result: result("not_sent"), isError: true };
}

/**
 * Asks one ask_user call and waits for the answer (blocking mode), or
 * re-attaches to the call's question when it was asked before (the same
 * run and call id): a durable run that resumes reads the answer it got.
 * Never throws for what the model should read (invalid input, a bridge that
 * refuses or is down, a wait that fails); an aborted signal throws.
 */
export async function askUser(bridge: AskBridge, input: AskUserInput, call: AskUserCall, wait: WaitOptions = {}): Promise<AskUserAnswer> {
  const problems = problemsOf(input);
  const body = askUserBody(input, call);
  try {
    validateAsk(body);
  } catch (err) {
    if (err instanceof AskBridgeError) problems.push(...err.details.map((d) => `${d.field}: ${d.problem}`));
  }
  if (problems.length) return invalid(problems);
  let q: Question;
  try {
    q = await bridge.ask(body, { signal: wait.signal });
  } catch (err) {
    if (wait.signal?.aborted) throw err;
    return notSent(err);
  }
  if (q.status !== "pending") return askUserAnswer(q);
  try {
    return askUserAnswer(await bridge.wait(q.id, wait));
  } catch (err) {
    if (wait.signal?.aborted) throw err;
    const why = err instanceof WaitTimeoutError ? "the wait's deadline passed" : (err as Error).message;
    return {
      text: `Waiting for the answer to question ${q.id} failed: ${why}. The question is still open; you may call ask_user again with the same questions to keep waiting, or continue without the answer.`,
      result: result("pending", q),
      isError: true,
    };
  }
}

/**
 * Durable mode: asks one ask_user call with resume.url and reports its run
 * paused, so the answer resumes it. The call's question is the one askUser
 * re-attaches to when the run continues.
 */
export async function askUserDurable(bridge: AskBridge, input: AskUserInput, call: AskUserCall & { resumeUrl: string }): Promise<Question> {
  const q = await bridge.ask(askUserBody(input, call));
  if (q.status === "pending") await bridge.pauseRun(q.run_id);
  return q;
}
