import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readFileSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { generateText, stepCountIs } from "ai";
import { nodeWebhookHandler } from "askbridge";
import { askbridgeToolApproval, askUserTool, resumeToolApprovals } from "askbridge/ai";
import { client, pending, decide, listen, maria, secret } from "./helpers.mjs";
import { model, tools, ran, regionQuestion } from "./fixtures/ai-agent.mjs";

const question = regionQuestion.questions[0].question;
const answered = `User has answered your questions: "${question}"="EU". You can now continue with the user's answers in mind.`;

test("ask_user, blocking mode: a person answers and the model reads the MCP tool's prose and structured result", async () => {
  const ask = async (name, answer) => {
    const bridge = client(`ai-ask-${name}`);
    const runId = `ai-ask-${name}`;
    const running = generateText({ model: model(), tools: { ...tools, ask_user: askUserTool(bridge, { runId, ask: { timeout: "10s" } }) }, messages: [{ role: "user", content: "pick a region" }], stopWhen: stepCountIs(2) });
    const [q] = await pending(bridge, 1);
    assert.equal(q.kind, "question");
    assert.equal(q.run_id, `${runId}:call-ask`);
    assert.equal(q.idempotency_key, q.run_id);
    assert.deepEqual(q.questions[0].options.map((o) => o.label), ["EU", "US"]);
    if (answer) await bridge.respond(q.id, { response: answer, responded_by: maria });
    const out = JSON.parse((await running).text).ask_user;
    assert.equal(out.type, "content");
    return { q, text: out.value[0].text, result: JSON.parse(out.value[1].text) };
  };
  const [eu, none] = await Promise.all([ask("eu", "EU"), ask("expire")]);
  assert.equal(eu.text, answered);
  assert.deepEqual(eu.result, { status: "answered", answers: { [question]: "EU" }, selections: { [question]: ["EU"] }, question_id: eu.q.id });
  assert.match(none.text, /^No answer: the question expired at \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ before anyone answered\. Continue without the answer/);
  assert.deepEqual(none.result, { status: "expired", answers: {}, selections: {}, question_id: none.q.id });
});

test("ask_user, blocking mode: input the bridge would refuse comes back to the model as what to fix, nothing is sent", async () => {
  const bridge = client("ai-ask-invalid");
  const t = askUserTool(bridge, { runId: "ai-ask-invalid" });
  const out = await t.execute({ questions: [{ question: "Which?", header: "A header far too long", options: [{ label: "Other" }, { label: "B" }] }] }, { toolCallId: "c1", messages: [] });
  assert.equal(out.result.status, "invalid");
  assert.deepEqual(out.result.problems, ["questions[0].header: at most 12 characters", 'questions[0].options[0].label: remove the "Other" option; the person can always answer in their own words ("Other" is added automatically)']);
  assert.match(out.text, /^The question was not sent: .*Fix these and call ask_user again\.$/);
  assert.equal((await bridge.list()).length, 0);
});

test("ask_user, durable mode: another process asks and exits; the webhook continues the conversation with the answer, asked once", async (t) => {
  const bridge = client("ai-ask-durable");
  const runId = "ai-ask-durable";
  const file = join(mkdtempSync(join(tmpdir(), "askbridge-ai-ask-")), "messages.json");
  const continued = [];
  const recv = await listen(nodeWebhookHandler({
    secret,
    onEvent: async (ev) => {
      const messages = JSON.parse(readFileSync(file, "utf8"));
      const toolMsg = await resumeToolApprovals(bridge, messages, ev, { runId });
      if (!toolMsg) return;
      const r = await generateText({ model: model(), tools: { ...tools, ask_user: askUserTool(bridge, { runId }) }, messages: [...messages, toolMsg], toolApproval: { ask_user: "user-approval" } });
      continued.push(JSON.parse(r.text));
    },
  }));
  t.after(recv.close);
  const args = [join(import.meta.dirname, "fixtures", "ai-ask-pause.mjs"), file, `${recv.url}/resume`, runId];
  const child = JSON.parse(execFileSync(process.execPath, args, { env: { ...process.env, PROJECT: bridge.project } }).toString());
  assert.equal(child.asked, 1);
  const [q] = await pending(bridge, 1);
  assert.equal(q.kind, "question", "ask_user is asked as its question, not as an approval");
  assert.equal(q.run_id, `${runId}:call-ask`);
  await bridge.respond(q.id, { response: "EU", responded_by: maria });
  const until = Date.now() + 60000;
  while (continued.length === 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
  await new Promise((r) => setTimeout(r, 1000)); // a second continuation would show up here
  assert.equal(continued.length, 1, "the conversation continues exactly once");
  assert.equal(continued[0].ask_user.value[0].text, answered);
  assert.equal(JSON.parse(continued[0].ask_user.value[1].text).question_id, q.id);
  assert.equal((await bridge.list()).length, 1, "the continued call re-attached to the answered question instead of asking again");
});

// Decides each approval as it is asked (the hook may ask one call at a time).
async function decideAsAsked(bridge, hows) {
  const done = new Set();
  while (done.size < Object.keys(hows).length) {
    const qs = (await pending(bridge, 1)).filter((q) => !done.has(q.id));
    for (const q of qs) {
      done.add(q.id);
      await decide(bridge, q, hows[q.action.tool]);
    }
  }
}

test("askbridgeToolApproval: the AI SDK 7 approval hook asks a person in one generateText call (allow runs, deny gives the reason, expiry denies)", async () => {
  const run = async (name, hows) => {
    const bridge = client(`ai-hook-${name}`);
    const runId = `ai-hook-${name}`;
    const running = generateText({ model: model(), tools, messages: [{ role: "user", content: "deploy and notify" }], toolApproval: askbridgeToolApproval(bridge, { runId, ask: { timeout: "10s" } }), stopWhen: stepCountIs(2) });
    const [q] = await pending(bridge, 1);
    assert.equal(q.kind, "approval");
    assert.equal(q.action.allow_edit, false);
    assert.equal(q.run_id, runId, "the hook asks in the conversation's run");
    assert.match(q.action.call_id, /^call-(deploy|notify)$/, "each call keyed by its toolCallId");
    if (hows) await decideAsAsked(bridge, hows);
    return JSON.parse((await running).text);
  };
  ran.length = 0;
  const [decided, expired] = await Promise.all([
    run("decided", { deploy: { kind: "allow" }, notify: { kind: "deny", note: "too noisy" } }),
    run("expired"),
  ]);
  assert.deepEqual(decided.deploy, { type: "text", value: "deployed prod" });
  assert.deepEqual(decided.notify, { type: "execution-denied", reason: "too noisy" });
  assert.deepEqual(expired.deploy, { type: "execution-denied", reason: "nobody answered within 10 s" });
  assert.deepEqual(expired.notify, { type: "execution-denied", reason: "nobody answered within 10 s" });
  assert.deepEqual(ran, ["deploy prod"]);
});

test("askbridgeToolApproval: always allow is remembered and ask_user calls are not approvals", async () => {
  const bridge = client("ai-hook-always");
  const always = new Set();
  const hook = askbridgeToolApproval(bridge, { runId: "ai-hook-always", alwaysAllowed: always });
  assert.equal(await hook({ toolCall: { toolCallId: "c0", toolName: "ask_user", input: regionQuestion } }), "not-applicable");
  const deciding = hook({ toolCall: { toolCallId: "c1", toolName: "deploy", input: { env: "prod" } } });
  const [q] = await pending(bridge, 1);
  assert.deepEqual(q.action.suggestions, [{ type: "always_allow", tool: "deploy" }]);
  await decide(bridge, q, { kind: "always" });
  assert.equal(await deciding, "approved");
  assert.equal(await hook({ toolCall: { toolCallId: "c2", toolName: "deploy", input: { env: "prod" } } }), "approved");
  assert.equal((await bridge.list()).length, 1, "the second deploy is approved without asking");
});
