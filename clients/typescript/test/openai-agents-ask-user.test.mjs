import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readFileSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { run } from "@openai/agents";
import { nodeWebhookHandler } from "askbridge";
import { askUserTool, resumeInterruptions } from "askbridge/openai-agents";
import { client, pending, listen, maria, secret } from "./helpers.mjs";
import { agent, regionQuestion } from "./fixtures/oa-agent.mjs";

const question = regionQuestion.questions[0].question;
const answered = `User has answered your questions: "${question}"="US". You can now continue with the user's answers in mind.`;

// The tool output the model read: the prose, a blank line, the structured result.
function read(output) {
  const [text, json] = output.split("\n\n");
  return { text, result: JSON.parse(json) };
}

test("ask_user, blocking mode: a person answers and the model reads the MCP tool's prose and structured result", async () => {
  const ask = async (name, how) => {
    const bridge = client(`oa-ask-${name}`);
    const runId = `oa-ask-${name}`;
    const running = run(agent([askUserTool(bridge, { runId, ask: { timeout: "10s" } })]), "pick a region");
    const [q] = await pending(bridge, 1);
    assert.equal(q.kind, "question");
    assert.equal(q.run_id, `${runId}:call-ask`);
    assert.equal(q.questions[0].header, "Region");
    if (how === "answer") await bridge.respond(q.id, { response: "US", responded_by: maria });
    if (how === "dismiss") await bridge.cancel(q.id, { reason: "user" });
    return { q, ...read(JSON.parse((await running).finalOutput).ask_user) };
  };
  const [us, dismissed] = await Promise.all([ask("us", "answer"), ask("dismiss", "dismiss")]);
  assert.equal(us.text, answered);
  assert.deepEqual(us.result, { status: "answered", answers: { [question]: "US" }, selections: { [question]: ["US"] }, question_id: us.q.id });
  assert.match(dismissed.text, /^The user dismissed the question without answering\. Continue without the answer/);
  assert.equal(dismissed.result.status, "cancelled");
});

test("ask_user, durable mode: another process asks and exits; RunState.fromString on the webhook continues with the answer, asked once", async (t) => {
  const bridge = client("oa-ask-durable");
  const runId = "oa-ask-durable";
  const file = join(mkdtempSync(join(tmpdir(), "askbridge-oa-ask-")), "state.txt");
  const continued = [];
  const recv = await listen(nodeWebhookHandler({
    secret,
    onEvent: async (ev) => {
      const a = agent([askUserTool(bridge, { runId, durable: true })]);
      const state = await resumeInterruptions(bridge, a, ev, { runId, load: () => readFileSync(file, "utf8") });
      if (!state) return;
      continued.push(JSON.parse((await run(a, state)).finalOutput));
    },
  }));
  t.after(recv.close);
  const args = [join(import.meta.dirname, "fixtures", "oa-ask-pause.mjs"), file, `${recv.url}/resume`, runId];
  const child = JSON.parse(execFileSync(process.execPath, args, { env: { ...process.env, PROJECT: bridge.project } }).toString());
  assert.equal(child.asked, 1);
  const [q] = await pending(bridge, 1);
  assert.equal(q.kind, "question", "ask_user is asked as its question, not as an approval");
  assert.equal(q.run_id, `${runId}:call-ask`);
  await bridge.respond(q.id, { response: "US", responded_by: maria });
  const until = Date.now() + 60000;
  while (continued.length === 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
  await new Promise((r) => setTimeout(r, 1000)); // a second continuation would show up here
  assert.equal(continued.length, 1, "the run continues exactly once");
  const out = read(continued[0].ask_user);
  assert.equal(out.text, answered);
  assert.equal(out.result.question_id, q.id);
  assert.equal((await bridge.list()).length, 1, "the continued call re-attached to the answered question instead of asking again");
});
