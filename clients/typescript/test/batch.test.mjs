// Parallel tool calls: the approvals of one turn are asked as one batch in
// one request (one run for the turn, each call keyed by its call id), a
// person decides them one by one or with Allow all / Deny all, and each
// call resumes with its own decision. AI SDK, OpenAI Agents and LangGraph.js
// on their mock models, against a real bridge.
import { test } from "node:test";
import assert from "node:assert/strict";
import { generateText } from "ai";
import { run } from "@openai/agents";
import { MemorySaver } from "@langchain/langgraph";
import { AskBridge, nodeWebhookHandler } from "askbridge";
import { askToolApprovals, resumeToolApprovals, decideToolApprovals } from "askbridge/ai";
import { askInterruptions, resumeInterruptions, decideInterruptions } from "askbridge/openai-agents";
import { runWithAskbridge, askInterrupts, resumeCommand } from "askbridge/langgraph";
import { client, pending, decide, listen, secret, maria } from "./helpers.mjs";
import { parallelModel, tools } from "./fixtures/ai-agent.mjs";
import { parallelAgent } from "./fixtures/oa-agent.mjs";
import { parallelGraph } from "./fixtures/lg-graph.mjs";

const deployOnly = { deploy: "user-approval" };

/** A client on a project of its own that logs every request ("POST /approval-batches"). */
function logged(name) {
  const base = client(name);
  const log = [];
  const bridge = new AskBridge({
    url: base.url,
    project: base.project,
    fetch: (url, init) => {
      log.push(`${init?.method ?? "GET"} ${new URL(url).pathname.replace(/^\/api\/projects\/[^/]+/, "")}`);
      return fetch(url, init);
    },
  });
  return { bridge, log };
}

/** The asks in a request log: one batch request, or one ask per call. */
function asks(log) {
  return log.filter((l) => l === "POST /approval-batches" || l === "POST /agent-questions");
}

/** The pending calls, by call id, and what they share. */
async function pendingCalls(bridge, n) {
  const qs = await pending(bridge, n);
  const byCall = Object.fromEntries(qs.map((q) => [q.action.call_id, q]));
  return { qs, byCall, batches: [...new Set(qs.map((q) => q.batch_id))], runs: [...new Set(qs.map((q) => q.run_id))] };
}

/** Waits until `box` has one entry, then a second more, and returns the only one. */
async function once(box, what) {
  const until = Date.now() + 90000;
  while (box.length === 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
  await new Promise((r) => setTimeout(r, 1000)); // a second continuation would show up here
  assert.equal(box.length, 1, `${what} continues exactly once`);
  return box[0];
}

const allowAll = (bridge, batchId) => bridge.respondApprovalBatch(batchId, { decision: "allow", responded_by: maria });

// ---------------------------------------------------------------- AI SDK

for (const n of [2, 5]) {
  test(`AI SDK, ${n} parallel calls: askToolApprovals sends one batch in one request; Allow all resumes every call once`, async (t) => {
    const { bridge, log } = logged(`b-ai-${n}`);
    const runId = `chat-${n}`;
    const messages = [{ role: "user", content: "deploy" }];
    const r1 = await generateText({ model: parallelModel(n), tools, messages, toolApproval: deployOnly });
    const saved = [...messages, ...r1.response.messages];
    const continued = [];
    const recv = await listen(nodeWebhookHandler({
      secret,
      onEvent: async (ev) => {
        const toolMsg = await resumeToolApprovals(bridge, saved, ev, { runId });
        if (!toolMsg) return;
        const r2 = await generateText({ model: parallelModel(n), tools, messages: [...saved, toolMsg], toolApproval: deployOnly });
        continued.push(JSON.parse(r2.text));
      },
    }));
    t.after(recv.close);
    const asked = await askToolApprovals(bridge, r1.content, { runId, resumeUrl: `${recv.url}/resume` });
    const { batches, runs, byCall } = await pendingCalls(bridge, n);
    assert.deepEqual({ batches: batches.length, runs: runs.length, asks: asks(log) }, { batches: 1, runs: 1, asks: ["POST /approval-batches"] }, `one batch, one run, one request for ${n} calls`);
    assert.equal(asked.length, n);
    assert.deepEqual(Object.keys(byCall).sort(), Array.from({ length: n }, (_, i) => `call-${i + 1}`).sort());
    assert.deepEqual(byCall["call-1"].action.input, { env: "e1" });
    const batch = await bridge.getApprovalBatch(batches[0]);
    assert.equal(batch.pending, n);
    assert.equal(batch.status, "pending");
    const outcome = await allowAll(bridge, batches[0]);
    assert.equal(outcome.decided.length, n);
    const out = await once(continued, "the conversation");
    assert.deepEqual(out, Object.fromEntries(Array.from({ length: n }, (_, i) => [`call-${i + 1}`, { type: "text", value: `deployed e${i + 1}` }])));
  });
}

test("AI SDK, a per-call mix: allow one, deny one with a note, Deny all the rest with a reason; each call gets its own result", async (t) => {
  const { bridge } = logged("b-ai-mix");
  const runId = "chat-mix";
  const messages = [{ role: "user", content: "deploy" }];
  const r1 = await generateText({ model: parallelModel(4), tools, messages, toolApproval: deployOnly });
  const saved = [...messages, ...r1.response.messages];
  const continued = [];
  const recv = await listen(nodeWebhookHandler({
    secret,
    onEvent: async (ev) => {
      const toolMsg = await resumeToolApprovals(bridge, saved, ev, { runId });
      if (toolMsg) continued.push(JSON.parse((await generateText({ model: parallelModel(4), tools, messages: [...saved, toolMsg], toolApproval: deployOnly })).text));
    },
  }));
  t.after(recv.close);
  await askToolApprovals(bridge, r1.content, { runId, resumeUrl: `${recv.url}/resume` });
  const { batches, byCall } = await pendingCalls(bridge, 4);
  await decide(bridge, byCall["call-1"], { kind: "allow" });
  await decide(bridge, byCall["call-2"], { kind: "deny", note: "not e2" });
  const outcome = await bridge.respondApprovalBatch(batches[0], { decision: "deny", reason: "freeze", responded_by: maria });
  assert.deepEqual(outcome.already.sort(), [byCall["call-1"].id, byCall["call-2"].id].sort(), "calls decided already keep their decision");
  assert.deepEqual(outcome.decided.sort(), [byCall["call-3"].id, byCall["call-4"].id].sort());
  const out = await once(continued, "the conversation");
  assert.deepEqual(out, {
    "call-1": { type: "text", value: "deployed e1" },
    "call-2": { type: "execution-denied", reason: "not e2" },
    "call-3": { type: "execution-denied", reason: "freeze" },
    "call-4": { type: "execution-denied", reason: "freeze" },
  });
});

test("AI SDK, blocking: decideToolApprovals asks 3 calls as one batch and waits for all; asked again it re-attaches", async () => {
  const { bridge, log } = logged("b-ai-block");
  const messages = [{ role: "user", content: "deploy" }];
  const r1 = await generateText({ model: parallelModel(3), tools, messages, toolApproval: deployOnly });
  const deciding = decideToolApprovals(bridge, r1.content, { runId: "block" });
  const { batches, byCall, qs } = await pendingCalls(bridge, 3);
  assert.equal(batches.length, 1);
  // The same step asked again (a re-run) re-attaches to the same three calls.
  const again = decideToolApprovals(bridge, r1.content, { runId: "block" });
  await new Promise((r) => setTimeout(r, 300));
  assert.deepEqual((await bridge.list()).map((q) => q.id).sort(), qs.map((q) => q.id).sort(), "nothing new asked");
  await decide(bridge, byCall["call-2"], { kind: "deny", note: "no" });
  await allowAll(bridge, batches[0]);
  const [toolMsg, toolMsg2] = await Promise.all([deciding, again]);
  assert.deepEqual(toolMsg2, toolMsg);
  assert.deepEqual(asks(log), ["POST /approval-batches", "POST /approval-batches"]);
  const out = JSON.parse((await generateText({ model: parallelModel(3), tools, messages: [...messages, ...r1.response.messages, toolMsg], toolApproval: deployOnly })).text);
  assert.deepEqual(out, { "call-1": { type: "text", value: "deployed e1" }, "call-2": { type: "execution-denied", reason: "no" }, "call-3": { type: "text", value: "deployed e3" } });
});

test("AI SDK, durable: the process asks again after a restart; the same call ids re-attach, nothing new is asked", async (t) => {
  const { bridge, log } = logged("b-ai-reask");
  const r1 = await generateText({ model: parallelModel(3), tools, messages: [{ role: "user", content: "deploy" }], toolApproval: deployOnly });
  const recv = await listen(nodeWebhookHandler({ secret, onEvent: () => {} }));
  t.after(recv.close);
  const first = await askToolApprovals(bridge, r1.content, { runId: "reask", resumeUrl: `${recv.url}/resume` });
  const second = await askToolApprovals(bridge, r1.content, { runId: "reask", resumeUrl: `${recv.url}/resume` });
  assert.deepEqual(second.map((q) => q.id), first.map((q) => q.id));
  assert.equal((await bridge.list()).length, 3);
  assert.deepEqual(asks(log), ["POST /approval-batches", "POST /approval-batches"]);
});

// ---------------------------------------------------------------- OpenAI Agents

for (const n of [2, 5]) {
  test(`OpenAI Agents, ${n} interruptions: askInterruptions sends one batch in one request; Allow all resumes the run once with every call run`, async (t) => {
    const { bridge, log } = logged(`b-oa-${n}`);
    const runId = `oa-${n}`;
    const r1 = await run(parallelAgent(n), "deploy");
    assert.equal(r1.interruptions.length, n);
    let saved = "";
    const continued = [];
    const recv = await listen(nodeWebhookHandler({
      secret,
      onEvent: async (ev) => {
        const a = parallelAgent(n);
        const state = await resumeInterruptions(bridge, a, ev, { runId, load: () => saved });
        if (state) continued.push(JSON.parse((await run(a, state)).finalOutput));
      },
    }));
    t.after(recv.close);
    await askInterruptions(bridge, r1, { runId, resumeUrl: `${recv.url}/resume`, save: (s) => (saved = s) });
    const { batches, runs } = await pendingCalls(bridge, n);
    assert.deepEqual({ batches: batches.length, runs: runs.length, asks: asks(log) }, { batches: 1, runs: 1, asks: ["POST /approval-batches"] }, `one batch, one run, one request for ${n} calls`);
    assert.equal((await bridge.getApprovalBatch(batches[0])).pending, n);
    await allowAll(bridge, batches[0]);
    const out = await once(continued, "the run");
    assert.deepEqual(out, Object.fromEntries(Array.from({ length: n }, (_, i) => [`call-${i + 1}`, `deployed e${i + 1}`])));
  });
}

test("OpenAI Agents, blocking: a per-call mix (allow, deny with a note, dismiss) applies each decision to its own call", async () => {
  const { bridge, log } = logged("b-oa-mix");
  const a = parallelAgent(3);
  const r1 = await run(a, "deploy");
  const deciding = decideInterruptions(bridge, r1, { runId: "oa-mix" });
  const { batches, byCall } = await pendingCalls(bridge, 3);
  assert.equal(batches.length, 1);
  assert.deepEqual(asks(log), ["POST /approval-batches"]);
  await decide(bridge, byCall["call-3"], { kind: "dismiss", note: "later" });
  await decide(bridge, byCall["call-1"], { kind: "allow" });
  await decide(bridge, byCall["call-2"], { kind: "deny", note: "not e2" });
  const out = JSON.parse((await run(a, await deciding)).finalOutput);
  assert.equal(out["call-1"], "deployed e1");
  assert.equal(out["call-2"], "not e2");
  assert.match(out["call-3"], /^dismissed( by .+)?: later$/);
});

// ---------------------------------------------------------------- LangGraph

for (const n of [2, 5]) {
  test(`LangGraph, ${n} interrupts: askInterrupts sends one batch in one request; Allow all resumes the graph once`, async (t) => {
    const { bridge, log } = logged(`b-lg-${n}`);
    const saver = new MemorySaver();
    const config = { configurable: { thread_id: `lg-${n}` } };
    const result = await parallelGraph(saver, n).invoke({ log: [] }, config);
    const continued = [];
    const recv = await listen(nodeWebhookHandler({
      secret,
      onEvent: async (ev) => {
        const g = parallelGraph(saver, n);
        const cmd = await resumeCommand(bridge, g, config, ev);
        if (cmd) continued.push((await g.invoke(cmd, config)).log.sort());
      },
    }));
    t.after(recv.close);
    await askInterrupts(bridge, result, config, { resumeUrl: `${recv.url}/resume` });
    const { batches, runs } = await pendingCalls(bridge, n);
    assert.deepEqual({ batches: batches.length, runs: runs.length, asks: asks(log) }, { batches: 1, runs: 1, asks: ["POST /approval-batches"] }, `one batch, one run, one request for ${n} interrupts`);
    await allowAll(bridge, batches[0]);
    const out = await once(continued, "the graph");
    assert.deepEqual(out, Array.from({ length: n }, (_, i) => `e${i + 1} deployed e${i + 1}`).sort());
  });
}

test("LangGraph, blocking: a per-call mix (allow, deny with a note, edit) and Allow all for the rest; each node gets its own decision", async () => {
  const { bridge, log } = logged("b-lg-mix");
  const config = { configurable: { thread_id: "lg-mix" } };
  const done = runWithAskbridge(bridge, parallelGraph(new MemorySaver(), 5), { log: [] }, config);
  const { qs, batches } = await pendingCalls(bridge, 5);
  assert.equal(batches.length, 1);
  assert.deepEqual(asks(log), ["POST /approval-batches"]);
  const byEnv = Object.fromEntries(qs.map((q) => [q.action.input.env, q]));
  await decide(bridge, byEnv.e1, { kind: "allow" });
  await decide(bridge, byEnv.e2, { kind: "deny", note: "not e2" });
  await decide(bridge, byEnv.e3, { kind: "edit", input: { env: "staging" } });
  await allowAll(bridge, batches[0]);
  assert.deepEqual((await done).log.sort(), ["e1 deployed e1", "e2 denied: not e2", "e3 deployed staging (edited)", "e4 deployed e4", "e5 deployed e5"]);
});

// ---------------------------------------------------------------- fallback

test("calls a batch cannot carry (approvals_required) are asked one by one in the turn's run, and still reach people as one batch", async () => {
  const { approvalBody, askApprovals, batchBody } = await import("askbridge");
  const { bridge, log } = logged("b-fallback");
  const bodies = [1, 2, 3].map((i) => approvalBody({ runId: "turn-f", callId: `call-${i}`, tool: "deploy", input: { env: `e${i}` }, ask: { approvals_required: 2 } }));
  assert.equal(batchBody(bodies), undefined, "approvals_required is not a batch field");
  assert.equal(batchBody([approvalBody({ runId: "a", callId: "c1", tool: "t" }), approvalBody({ runId: "b", callId: "c2", tool: "t" })]), undefined, "calls of two runs are not one batch");
  const records = await askApprovals(bridge, bodies);
  assert.deepEqual(asks(log), ["POST /agent-questions", "POST /agent-questions", "POST /agent-questions"]);
  assert.deepEqual(records.map((q) => [q.action.call_id, q.approvals_required]), [["call-1", 2], ["call-2", 2], ["call-3", 2]]);
  assert.equal(new Set(records.map((q) => q.batch_id)).size, 1, "asked within the batch window: one batch");
  const again = await askApprovals(bridge, bodies);
  assert.deepEqual(again.map((q) => q.id), records.map((q) => q.id), "the same call ids re-attach");
});
