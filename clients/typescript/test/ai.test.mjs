import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readFileSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { generateText } from "ai";
import { nodeWebhookHandler } from "askbridge";
import { decideToolApprovals, resumeToolApprovals, toolApprovalFor } from "askbridge/ai";
import { client, pending, decide, listen, secret } from "./helpers.mjs";
import { model, tools, ran } from "./fixtures/ai-agent.mjs";

const approval = { deploy: "user-approval", notify: "user-approval" };

// One run: the model calls deploy, a person decides through the bridge, the run continues.
async function blockingRun(name, how, { always } = {}) {
  const bridge = client(`ai-${name}`);
  const runId = `chat-${name}`;
  const messages = [{ role: "user", content: "deploy" }];
  const r1 = await generateText({ model: model(), tools, messages, toolApproval: toolApprovalFor(always ?? new Set()) });
  const deciding = decideToolApprovals(bridge, r1.content, { runId, alwaysAllowed: always, ask: { timeout: "10s" } });
  const [q] = await pending(bridge, 1);
  // The approval is visible through the API with its action, and Edit is not offered.
  assert.equal(q.kind, "approval");
  assert.equal(q.run_id, `${runId}:call-deploy`);
  assert.deepEqual(q.action.input, { env: "prod" });
  assert.equal(q.action.tool, "deploy");
  assert.equal(q.action.allow_edit, false);
  await assert.rejects(bridge.respond(q.id, { edited_input: { env: "staging" } }), (e) => e.status === 400 && e.field === "edited_input");
  await decide(bridge, q, how);
  const toolMsg = await deciding;
  const r2 = await generateText({ model: model(), tools, messages: [...messages, ...r1.response.messages, toolMsg], toolApproval: toolApprovalFor(always ?? new Set()) });
  return { out: JSON.parse(r2.text), toolMsg };
}

test("blocking mode: every decision reaches the AI SDK as the tool-approval-response it expects", async () => {
  const always = new Set();
  const [allow, deny, alw, expire, dismiss] = await Promise.all([
    blockingRun("allow", { kind: "allow" }),
    blockingRun("deny", { kind: "deny", note: "not on a Friday" }),
    blockingRun("always", { kind: "always" }, { always }),
    blockingRun("expire", { kind: "expire" }),
    blockingRun("dismiss", { kind: "dismiss", note: "use staging" }),
  ]);
  assert.deepEqual(allow.out.deploy, { type: "text", value: "deployed prod" });
  assert.deepEqual(deny.out.deploy, { type: "execution-denied", reason: "not on a Friday" });
  assert.deepEqual(alw.out.deploy, { type: "text", value: "deployed prod" });
  assert.deepEqual([...always], ["deploy"], "always allow is remembered for the conversation");
  assert.deepEqual(expire.out.deploy, { type: "execution-denied", reason: "nobody answered within 10 s" });
  assert.match(dismiss.out.deploy.reason, /^dismissed( by .+)?: use staging$/);
  assert.equal(dismiss.out.deploy.type, "execution-denied");

  // Always allow: the next deploy in this conversation is not asked again.
  const r = await generateText({ model: model(), tools, messages: [{ role: "user", content: "deploy" }], toolApproval: toolApprovalFor(always) });
  assert.equal(r.content.filter((p) => p.type === "tool-approval-request" && !p.isAutomatic).length, 0);
  assert.equal(await decideToolApprovals(client("ai-none"), r.content, { runId: "none" }), undefined);
  assert.equal(r.content.find((p) => p.type === "tool-result").output, "deployed prod");
});

test("several pending approvals are never confused: each call gets its own decision", async () => {
  const bridge = client("ai-two");
  const messages = [{ role: "user", content: "deploy and notify" }];
  const r1 = await generateText({ model: model(), tools, messages, toolApproval: approval });
  const deciding = decideToolApprovals(bridge, r1.content, { runId: "two" });
  const qs = await pending(bridge, 2);
  const byTool = Object.fromEntries(qs.map((q) => [q.action.tool, q]));
  await decide(bridge, byTool.notify, { kind: "allow" });
  await decide(bridge, byTool.deploy, { kind: "deny", note: "freeze" });
  const r2 = await generateText({ model: model(), tools, messages: [...messages, ...r1.response.messages, await deciding], toolApproval: approval });
  const out = JSON.parse(r2.text);
  assert.deepEqual(out.deploy, { type: "execution-denied", reason: "freeze" });
  assert.deepEqual(out.notify, { type: "text", value: "notified #ops" });
});

// Durable mode: a child process runs the agent until it needs approvals (deploy
// and notify), asks them with resume.url and exits; the resume webhooks,
// received here, continue the conversation from the saved messages only.
// decideAll gets the pending approvals by tool and answers them (or not);
// always, a Set, is the resuming process's memory of always-allowed tools.
async function durableRun(t, name, decideAll, { timeout = "10m", always } = {}) {
  const bridge = client(`ai-${name}`);
  const runId = `ai-${name}`;
  const file = join(mkdtempSync(join(tmpdir(), "askbridge-ai-")), "messages.json");
  const continued = [];
  const recv = await listen(nodeWebhookHandler({
    secret,
    onEvent: async (ev) => {
      const messages = JSON.parse(readFileSync(file, "utf8")); // only what the first process saved
      const toolMsg = await resumeToolApprovals(bridge, messages, ev, { runId, alwaysAllowed: always });
      if (!toolMsg) return;
      const r = await generateText({ model: model(), tools, messages: [...messages, toolMsg], toolApproval: approval });
      continued.push(JSON.parse(r.text));
    },
  }));
  t.after(recv.close);
  const args = [join(import.meta.dirname, "fixtures", "ai-pause.mjs"), file, `${recv.url}/resume`, runId, timeout, always ? "always" : ""];
  const child = JSON.parse(execFileSync(process.execPath, args, { env: { ...process.env, PROJECT: bridge.project } }).toString());
  assert.equal(child.asked, 2);
  assert.notEqual(child.pid, process.pid);
  const qs = await pending(bridge, 2);
  const byTool = Object.fromEntries(qs.map((q) => [q.action.tool, q]));
  assert.equal(byTool.deploy.run_id, `${runId}:call-deploy`);
  assert.equal(byTool.notify.run_id, byTool.deploy.run_id, "the step's calls share its run");
  assert.equal(byTool.notify.batch_id, byTool.deploy.batch_id, "and one batch");
  assert.deepEqual(byTool.deploy.action.input, { env: "prod" });
  ran.length = 0;
  await decideAll(bridge, byTool);
  const until = Date.now() + 90000; // expiry and a loaded machine
  while (continued.length === 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
  await new Promise((r) => setTimeout(r, 1000)); // a second continuation would show up here
  assert.equal(continued.length, 1, "the conversation continues exactly once");
  return { out: continued[0], byTool };
}

test("durable mode: another process pauses; the resume webhooks continue the conversation exactly once", async (t) => {
  const { out } = await durableRun(t, "durable", async (bridge, byTool) => {
    await decide(bridge, byTool.deploy, { kind: "allow" });
    await decide(bridge, byTool.notify, { kind: "deny", note: "too noisy" });
  });
  assert.deepEqual(out.deploy, { type: "text", value: "deployed prod" });
  assert.deepEqual(out.notify, { type: "execution-denied", reason: "too noisy" });
  assert.deepEqual(ran, ["deploy prod"]);
});

test("durable mode: always allow is approved and remembered by the process that resumes", async (t) => {
  const always = new Set(); // the resuming process's memory of the conversation's rules
  const { out, byTool } = await durableRun(t, "durable-always", async (bridge, byTool) => {
    assert.deepEqual(byTool.deploy.action.suggestions, [{ type: "always_allow", tool: "deploy" }]);
    await decide(bridge, byTool.deploy, { kind: "always" });
    await decide(bridge, byTool.notify, { kind: "allow" });
  }, { always });
  assert.equal(byTool.deploy.action.allow_edit, false);
  assert.deepEqual(out.deploy, { type: "text", value: "deployed prod" });
  assert.deepEqual(out.notify, { type: "text", value: "notified #ops" });
  assert.deepEqual([...always], ["deploy"], "only the tool answered with always allow is remembered");
  // The next deploy of this conversation is approved without asking anyone.
  const r = await generateText({ model: model(), tools, messages: [{ role: "user", content: "deploy" }], toolApproval: toolApprovalFor(always) });
  assert.equal(r.content.filter((p) => p.type === "tool-approval-request" && !p.isAutomatic).length, 0);
  assert.equal(r.content.find((p) => p.type === "tool-result").output, "deployed prod");
});

test("durable mode: expiry denies every call with why; Edit is never offered", async (t) => {
  const { out } = await durableRun(t, "durable-expire", async (bridge, byTool) => {
    for (const q of Object.values(byTool)) {
      assert.equal(q.action.allow_edit, false);
      await assert.rejects(bridge.respond(q.id, { edited_input: { env: "staging" } }), (e) => e.status === 400 && e.field === "edited_input");
    }
    // nobody answers
  }, { timeout: "10s" });
  assert.deepEqual(out.deploy, { type: "execution-denied", reason: "nobody answered within 10 s" });
  assert.deepEqual(out.notify, { type: "execution-denied", reason: "nobody answered within 10 s" });
  assert.deepEqual(ran, []);
});
