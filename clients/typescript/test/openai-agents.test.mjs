import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readFileSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { run } from "@openai/agents";
import { nodeWebhookHandler } from "askbridge";
import { decideInterruptions, resumeInterruptions } from "askbridge/openai-agents";
import { client, pending, decide, listen, secret } from "./helpers.mjs";
import { agent, ran } from "./fixtures/oa-agent.mjs";

async function blockingRun(name, how) {
  const bridge = client(`oa-${name}`);
  const a = agent();
  const r1 = await run(a, "deploy");
  assert.equal(r1.interruptions.length, 1);
  const deciding = decideInterruptions(bridge, r1, { runId: `oa-${name}`, ask: { timeout: "10s" } });
  const [q] = await pending(bridge, 1);
  assert.equal(q.run_id, `oa-${name}:call-deploy`);
  assert.equal(q.action.tool, "deploy");
  assert.deepEqual(q.action.input, { env: "prod" });
  assert.equal(q.action.allow_edit, false);
  assert.deepEqual(q.action.suggestions, [{ type: "always_allow", tool: "deploy" }]);
  await assert.rejects(bridge.respond(q.id, { edited_input: { env: "staging" } }), (e) => e.status === 400 && e.field === "edited_input");
  await decide(bridge, q, how);
  const state = await deciding;
  const r2 = await run(a, state);
  return { out: JSON.parse(r2.finalOutput), state };
}

test("blocking mode: each decision reaches state.approve / state.reject", async () => {
  const [allow, deny, always, expire, dismiss] = await Promise.all([
    blockingRun("allow", { kind: "allow" }),
    blockingRun("deny", { kind: "deny", note: "not on a Friday" }),
    blockingRun("always", { kind: "always" }),
    blockingRun("expire", { kind: "expire" }),
    blockingRun("dismiss", { kind: "dismiss", note: "use staging" }),
  ]);
  assert.equal(allow.out.deploy, "deployed prod");
  assert.equal(deny.out.deploy, "not on a Friday");
  assert.equal(always.out.deploy, "deployed prod");
  // alwaysApprove: any later deploy call of this run is approved without asking.
  assert.equal(always.state._context.isToolApproved({ toolName: "deploy", callId: "a-later-call" }), true);
  assert.notEqual(allow.state._context.isToolApproved({ toolName: "deploy", callId: "a-later-call" }), true);
  assert.equal(expire.out.deploy, "nobody answered within 10 s");
  assert.match(dismiss.out.deploy, /^dismissed( by .+)?: use staging$/);
});

test("several interruptions are never confused: each call id gets its own decision", async () => {
  const bridge = client("oa-two");
  const a = agent();
  ran.length = 0;
  const r1 = await run(a, "deploy and notify");
  const deciding = decideInterruptions(bridge, r1, { runId: "oa-two" });
  const qs = await pending(bridge, 2);
  const byTool = Object.fromEntries(qs.map((q) => [q.action.tool, q]));
  // One turn, one run and one batch; each approval keyed by its call id.
  assert.equal(byTool.notify.run_id, "oa-two:call-deploy");
  assert.equal(byTool.notify.batch_id, byTool.deploy.batch_id);
  assert.equal(byTool.notify.action.call_id, "call-notify");
  await decide(bridge, byTool.notify, { kind: "allow" });
  await decide(bridge, byTool.deploy, { kind: "deny", note: "freeze" });
  const out = JSON.parse((await run(a, await deciding)).finalOutput);
  assert.deepEqual(out, { deploy: "freeze", notify: "notified #ops" });
  assert.deepEqual(ran, ["notify #ops"]);
});

// Durable mode: a child process runs the agent until it stops on the deploy
// and notify interruptions, saves state.toString(), asks and exits; the resume
// webhooks, received here, restore it with RunState.fromString and continue.
// decideAll gets the pending approvals by tool and answers them (or not).
async function durableRun(t, name, decideAll, { timeout = "10m" } = {}) {
  const bridge = client(`oa-${name}`);
  const runId = `oa-${name}`;
  const file = join(mkdtempSync(join(tmpdir(), "askbridge-oa-")), "state.txt");
  const continued = [];
  const recv = await listen(nodeWebhookHandler({
    secret,
    onEvent: async (ev) => {
      const a = agent();
      const state = await resumeInterruptions(bridge, a, ev, { runId, load: () => readFileSync(file, "utf8") });
      if (!state) return;
      continued.push(JSON.parse((await run(a, state)).finalOutput));
    },
  }));
  t.after(recv.close);
  const args = [join(import.meta.dirname, "fixtures", "oa-pause.mjs"), file, `${recv.url}/resume`, runId, timeout];
  const child = JSON.parse(execFileSync(process.execPath, args, { env: { ...process.env, PROJECT: bridge.project } }).toString());
  assert.equal(child.asked, 2);
  assert.notEqual(child.pid, process.pid);
  const qs = await pending(bridge, 2);
  const byTool = Object.fromEntries(qs.map((q) => [q.action.tool, q]));
  assert.equal(byTool.deploy.run_id, `${runId}:call-deploy`);
  assert.equal(byTool.notify.run_id, `${runId}:call-deploy`, "the turn's calls share its run");
  assert.equal(byTool.notify.batch_id, byTool.deploy.batch_id);
  ran.length = 0;
  await decideAll(bridge, byTool);
  const until = Date.now() + 90000; // expiry and a loaded machine
  while (continued.length === 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
  await new Promise((r) => setTimeout(r, 1000)); // a second continuation would show up here
  assert.equal(continued.length, 1, "the run continues exactly once");
  return continued[0];
}

test("durable mode: state.toString() from another process, RunState.fromString on the webhook, continued exactly once", async (t) => {
  const out = await durableRun(t, "durable", async (bridge, byTool) => {
    await decide(bridge, byTool.deploy, { kind: "always" });
    await decide(bridge, byTool.notify, { kind: "dismiss", note: "too noisy" });
  });
  assert.equal(out.deploy, "deployed prod");
  assert.match(out.notify, /^dismissed( by .+)?: too noisy$/);
});

test("durable mode: allow runs the call, deny with a note rejects the other with that note", async (t) => {
  const out = await durableRun(t, "durable-allow-deny", async (bridge, byTool) => {
    await decide(bridge, byTool.deploy, { kind: "allow" });
    await decide(bridge, byTool.notify, { kind: "deny", note: "quiet hours" });
  });
  assert.deepEqual(out, { deploy: "deployed prod", notify: "quiet hours" });
  assert.deepEqual(ran, ["deploy prod"]);
});

test("durable mode: expiry rejects every call with why; Edit is never offered", async (t) => {
  const out = await durableRun(t, "durable-expire", async (bridge, byTool) => {
    for (const q of Object.values(byTool)) {
      assert.equal(q.action.allow_edit, false);
      await assert.rejects(bridge.respond(q.id, { edited_input: { env: "staging" } }), (e) => e.status === 400 && e.field === "edited_input");
    }
    // nobody answers
  }, { timeout: "10s" });
  assert.deepEqual(out, { deploy: "nobody answered within 10 s", notify: "nobody answered within 10 s" });
  assert.deepEqual(ran, []);
});
