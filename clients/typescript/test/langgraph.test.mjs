import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MemorySaver } from "@langchain/langgraph";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { nodeWebhookHandler } from "askbridge";
import { runWithAskbridge, resumeCommand } from "askbridge/langgraph";
import { client, pending, decide, listen, secret } from "./helpers.mjs";
import { graph, questionGraph, hitlGraph, askUserGraph, regionQuestion, ran } from "./fixtures/lg-graph.mjs";

// Two approvals pending at once (deploy and notify run side by side).
async function blockingRun(name, deployHow, notifyHow = { kind: "allow" }) {
  const bridge = client(`lg-${name}`);
  const config = { configurable: { thread_id: `lg-${name}` } };
  const done = runWithAskbridge(bridge, graph(new MemorySaver()), { log: [] }, config, { ask: { timeout: "10s" } });
  const qs = await pending(bridge, 2);
  const byTool = Object.fromEntries(qs.map((q) => [q.action.tool, q]));
  assert.match(byTool.deploy.run_id, new RegExp(`^lg-${name}:`));
  assert.equal(byTool.deploy.run_id, byTool.notify.run_id, "the step's approvals share one run");
  assert.equal(byTool.deploy.batch_id, byTool.notify.batch_id, "and one batch");
  assert.equal(byTool.deploy.action.allow_edit, undefined, "deploy can run edited arguments: Edit is offered");
  assert.equal(byTool.notify.action.allow_edit, false);
  await decide(bridge, byTool.notify, notifyHow);
  await decide(bridge, byTool.deploy, deployHow);
  const out = await done;
  return { log: out.log, bridge };
}

test("blocking mode: allow, edit, deny with a note, always allow, expiry and dismissal resume the graph with exactly that", async () => {
  const [allow, edit, deny, always, expire, dismiss] = await Promise.all([
    blockingRun("allow", { kind: "allow" }),
    blockingRun("edit", { kind: "edit", input: { env: "staging" } }),
    blockingRun("deny", { kind: "deny", note: "not on a Friday" }),
    blockingRun("always", { kind: "always" }),
    blockingRun("expire", { kind: "expire" }, { kind: "expire" }),
    blockingRun("dismiss", { kind: "dismiss", note: "use staging" }),
  ]);
  assert.deepEqual(allow.log.sort(), ["deployed prod", "notified #ops"]);
  assert.deepEqual(edit.log.sort(), ["deployed staging (edited)", "notified #ops"]);
  assert.deepEqual(deny.log.sort(), ["deploy denied: not on a Friday", "notified #ops"]);
  assert.deepEqual(always.log.sort(), ["deployed prod (always)", "notified #ops"]);
  assert.deepEqual(expire.log.sort(), ["deploy denied: nobody answered within 10 s", "notify denied: nobody answered within 10 s"]);
  assert.equal(dismiss.log.length, 2);
  assert.match(dismiss.log.find((l) => l.startsWith("deploy")), /^deploy denied: dismissed( by .+)?: use staging$/);
});

test("a re-run node never asks twice: the idempotency key is the thread and interrupt id", async () => {
  const bridge = client("lg-q");
  const config = { configurable: { thread_id: "lg-q" } };
  const done = runWithAskbridge(bridge, questionGraph(new MemorySaver()), { log: [] }, config);
  const [q] = await pending(bridge, 1);
  assert.equal(q.idempotency_key, q.run_id);
  assert.match(q.run_id, /^lg-q:/);
  await bridge.respond(q.id, { response: "EU" });
  assert.deepEqual((await done).log, ["answered: eu-west-1"]);
  assert.equal((await bridge.list({})).length, 1, "one question for one interrupt");
});

test("LangChain HITL middleware requests: edit where allowed, reject with the message", async () => {
  const bridge = client("lg-hitl");
  const config = { configurable: { thread_id: "lg-hitl" } };
  const done = runWithAskbridge(bridge, hitlGraph(new MemorySaver()), { log: [] }, config);
  const qs = await pending(bridge, 2);
  const byTool = Object.fromEntries(qs.map((q) => [q.action.tool, q]));
  assert.equal(byTool.write_file.action.allow_edit, undefined);
  assert.equal(byTool.send_email.action.allow_edit, false, "the middleware does not allow edit for send_email");
  await assert.rejects(bridge.respond(byTool.send_email.id, { edited_input: { to: "x@example.com" } }), (e) => e.field === "edited_input");
  await decide(bridge, byTool.write_file, { kind: "edit", input: { path: "b.txt", text: "hi" } });
  await decide(bridge, byTool.send_email, { kind: "deny", note: "no mail today" });
  assert.deepEqual((await done).log.map((l) => JSON.parse(l)), [
    { type: "edit", editedAction: { name: "write_file", args: { path: "b.txt", text: "hi" } } },
    { type: "reject", message: "no mail today" },
  ]);
});

// Durable mode: a child process runs the graph until deploy and notify
// interrupt, asks each with resume.url and exits (the checkpoint stays in the
// SQLite file); the resume webhooks, received here, resume the graph once.
// decideAll gets the pending approvals by tool and answers them (or not).
async function durableRun(t, name, decideAll, { timeout = "10m", which = "approvals", count = 2 } = {}) {
  const bridge = client(`lg-${name}`);
  const threadId = `lg-${name}`;
  const file = join(mkdtempSync(join(tmpdir(), "askbridge-lg-")), "checkpoints.db");
  const config = { configurable: { thread_id: threadId } };
  const continued = [];
  const recv = await listen(nodeWebhookHandler({
    secret,
    onEvent: async (ev) => {
      const g = (which === "ask_user" ? askUserGraph : graph)(SqliteSaver.fromConnString(file)); // only what the first process checkpointed
      const cmd = await resumeCommand(bridge, g, config, ev);
      if (!cmd) return;
      continued.push((await g.invoke(cmd, config)).log);
    },
  }));
  t.after(recv.close);
  const args = [join(import.meta.dirname, "fixtures", "lg-pause.mjs"), file, `${recv.url}/resume`, threadId, timeout, which];
  const child = JSON.parse(execFileSync(process.execPath, args, { env: { ...process.env, PROJECT: bridge.project } }).toString());
  assert.equal(child.asked, count);
  assert.notEqual(child.pid, process.pid);
  const qs = await pending(bridge, count);
  const byTool = Object.fromEntries(qs.map((q) => [q.action?.tool ?? "ask_user", q]));
  assert.match(qs[0].run_id, new RegExp(`^${threadId}:`));
  ran.length = 0;
  await decideAll(bridge, byTool);
  const until = Date.now() + 90000; // expiry and a loaded machine
  while (continued.length === 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
  await new Promise((r) => setTimeout(r, 1000)); // a second resume would show up here
  assert.equal(continued.length, 1, "the graph resumes exactly once");
  return continued[0].sort();
}

test("durable mode: another process pauses; the webhooks resume the graph once with Command({resume})", async (t) => {
  const log = await durableRun(t, "durable", async (bridge, byTool) => {
    await decide(bridge, byTool.deploy, { kind: "edit", input: { env: "canary" } });
    await decide(bridge, byTool.notify, { kind: "deny", note: "quiet hours" });
  });
  assert.deepEqual(log, ["deployed canary (edited)", "notify denied: quiet hours"]);
  assert.deepEqual(ran, ["deploy canary"]);
});

test("durable mode: allow and always allow resume the graph with exactly that", async (t) => {
  const log = await durableRun(t, "durable-allow-always", async (bridge, byTool) => {
    assert.deepEqual(byTool.deploy.action.suggestions, [{ type: "always_allow", tool: "deploy" }]);
    await decide(bridge, byTool.deploy, { kind: "always" });
    await decide(bridge, byTool.notify, { kind: "allow" });
  });
  assert.deepEqual(log, ["deployed prod (always)", "notified #ops"]);
  assert.deepEqual(ran, ["deploy prod"]);
});

test("durable mode: expiry resumes every interrupt as a denial that says why", async (t) => {
  const log = await durableRun(t, "durable-expire", async () => {}, { timeout: "10s" }); // nobody answers
  assert.deepEqual(log, ["deploy denied: nobody answered within 10 s", "notify denied: nobody answered within 10 s"]);
  assert.deepEqual(ran, []);
});

test("a process stopped while people decide: run again on the same thread (SQLite checkpointer), it re-attaches instead of asking again", async () => {
  const bridge = client("lg-restart");
  const threadId = "lg-restart";
  const file = join(mkdtempSync(join(tmpdir(), "askbridge-lg-")), "checkpoints.db");
  const child = spawn(process.execPath, [join(import.meta.dirname, "fixtures", "lg-run.mjs"), file, threadId], { env: { ...process.env, PROJECT: bridge.project }, stdio: "ignore" });
  const exited = new Promise((r) => child.on("exit", r));
  const first = await pending(bridge, 2);
  child.kill("SIGKILL"); // the agent process dies while both approvals are pending
  await exited;
  const done = runWithAskbridge(bridge, graph(SqliteSaver.fromConnString(file)), { log: [] }, { configurable: { thread_id: threadId } });
  await new Promise((r) => setTimeout(r, 1500)); // a second ask would show up here
  const all = await bridge.list();
  assert.deepEqual(all.map((q) => q.id).sort(), first.map((q) => q.id).sort(), "the re-run asks nothing new: it waits on the same two approvals");
  const byTool = Object.fromEntries(first.map((q) => [q.action.tool, q]));
  await decide(bridge, byTool.deploy, { kind: "edit", input: { env: "staging" } });
  await decide(bridge, byTool.notify, { kind: "allow" });
  assert.deepEqual((await done).log.sort(), ["deployed staging (edited)", "notified #ops"]);
});

test("ask_user, blocking mode: askUserInterrupt reads the MCP tool's prose and structured result", async () => {
  const bridge = client("lg-ask");
  const done = runWithAskbridge(bridge, askUserGraph(new MemorySaver()), { log: [] }, { configurable: { thread_id: "lg-ask" } });
  const [q] = await pending(bridge, 1);
  assert.equal(q.kind, "question");
  assert.equal(q.questions[0].header, "Region");
  await bridge.respond(q.id, { response: "EU" });
  const [text, result] = (await done).log;
  const question = regionQuestion.questions[0].question;
  assert.equal(text, `User has answered your questions: "${question}"="EU". You can now continue with the user's answers in mind.`);
  assert.deepEqual(JSON.parse(result), { status: "answered", answers: { [question]: "EU" }, selections: { [question]: ["EU"] }, question_id: q.id });
});

test("ask_user, durable mode: another process asks and exits; the webhook resumes the graph once with the answer", async (t) => {
  const log = await durableRun(t, "durable-ask", async (bridge, byTool) => {
    assert.equal(byTool.ask_user.kind, "question");
    await bridge.respond(byTool.ask_user.id, { response: "US" });
  }, { which: "ask_user", count: 1 });
  assert.equal(log.length, 2);
  assert.match(log.find((l) => l.startsWith("User")), /="US"\. You can now continue/);
});
