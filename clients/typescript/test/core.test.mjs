import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createHmac } from "node:crypto";
import { AskBridge, AskBridgeError, BatchWaitTimeoutError, WaitTimeoutError, verifyWebhook, nodeWebhookHandler, fetchWebhookHandler } from "askbridge";
import { client, pending, maria, listen, secret } from "./helpers.mjs";

test("ask, a person answers, wait returns the answer; a second wait returns the same record", async () => {
  const b = client("answer");
  const q = await b.ask({ run_id: "r1", agent_id: "bot", question: "Which auth method?", header: "Auth", options: [{ label: "OAuth 2.0", value: "oauth" }, { label: "API key" }], timeout: "5m" });
  assert.equal(q.status, "pending");
  assert.match(q.message, /pause until someone answers/);
  const waiting = b.wait(q.id);
  await b.respond(q.id, { response: "OAuth 2.0", responded_by: maria });
  const done = await waiting;
  assert.equal(done.status, "answered");
  assert.equal(done.response, "oauth");
  assert.deepEqual(done.answers, { "Which auth method?": "OAuth 2.0" });
  assert.deepEqual(await b.wait(q.id), done);
  assert.deepEqual(await b.get(q.id), done);
});

test("every shape of the API: several items, open-ended, an approval with its action, responders, idempotency key", async () => {
  const b = client("shapes");
  const body = {
    run_id: "r2", agent_id: "bot", agent_name: "Deploy bot", context: "Deploying **v2**",
    questions: [
      { question: "Which features?", header: "Features", multiSelect: true, options: [{ label: "Login" }, { label: "Dashboard" }, { label: "Search", recommended: true }] },
      { question: "Anything else?" },
    ],
    responders: { users: ["slack:U0MARIA"] }, timeout: 600, idempotency_key: "call-1",
  };
  const q = await b.ask(body);
  assert.equal(q.questions.length, 2);
  assert.deepEqual(q.responders.users, ["slack:U0MARIA"]);
  const again = await b.ask(body);
  assert.equal(again.id, q.id, "the same idempotency key re-attaches to the same question");
  const answered = b.askAndWait(body);
  await b.respond(q.id, { answers: { "Which features?": ["Login", "Search"], "Anything else?": "ship it" }, responded_by: maria });
  const done = await answered;
  assert.deepEqual(done.selections, { "Which features?": ["Login", "Search"], "Anything else?": ["ship it"] });

  const a = await b.ask({ run_id: "r3", kind: "approval", question: "Run deploy?", options: [{ label: "Allow" }, { label: "Deny" }], action: { tool: "deploy", input: { env: "prod" } } });
  assert.equal(a.kind, "approval");
  assert.deepEqual(a.action.input, { env: "prod" });
  assert.match(a.action.digest, /^sha256:/);
});

test("a wait honours its AbortSignal", async () => {
  const b = client("abort");
  const q = await b.ask({ run_id: "r", question: "Still there?" });
  const ac = new AbortController();
  const t0 = Date.now();
  setTimeout(() => ac.abort(), 200);
  await assert.rejects(b.wait(q.id, { signal: ac.signal }), (e) => e.name === "AbortError");
  assert.ok(Date.now() - t0 < 5000, "aborted promptly");
  assert.equal((await b.get(q.id)).status, "pending", "aborting a wait leaves the question pending");
});

test("a client deadline never drops a late answer: the question stays pending and a later wait returns it", async () => {
  const b = client("deadline");
  const q = await b.ask({ run_id: "r", question: "Late?", options: [{ label: "Yes" }, { label: "No" }] });
  await assert.rejects(b.wait(q.id, { timeoutMs: 1200 }), (e) => e instanceof WaitTimeoutError && e.code === "wait_timeout" && e.question.status === "pending");
  await b.respond(q.id, { response: "No", responded_by: maria });
  assert.equal((await b.wait(q.id, { timeoutMs: 1200 })).response, "No");
});

test("get, list and cancel with a note", async () => {
  const b = client("cancel");
  const q1 = await b.ask({ run_id: "ra", question: "One?" });
  const q2 = await b.ask({ run_id: "rb", question: "Two?" });
  assert.deepEqual((await b.list({ status: "pending" })).map((q) => q.id), [q1.id, q2.id]);
  assert.deepEqual((await b.list({ runId: "rb" })).map((q) => q.id), [q2.id]);
  const c = await b.cancel(q1.id, { reason: "agent", note: "no longer needed" });
  assert.equal(c.status, "cancelled");
  assert.equal(c.cancel_reason, "agent");
  assert.equal(c.cancel_note, "no longer needed");
  assert.deepEqual((await b.list({ status: "pending" })).map((q) => q.id), [q2.id]);
  await assert.rejects(b.cancel(q1.id), (e) => e instanceof AskBridgeError && e.status === 409);
});

test("cancel with no reason is the agent withdrawing, not a person's dismissal", async () => {
  const b = client("withdraw");
  const q = await b.ask({ run_id: "rw", question: "Still needed?" });
  const c = await b.cancel(q.id);
  assert.equal(c.status, "cancelled");
  assert.equal(c.cancel_reason, "agent");
});

test("invalid questions are refused before anything is sent, with the API's messages", async () => {
  let calls = 0;
  const b = new AskBridge({ url: "http://127.0.0.1:9", fetch: async () => { calls++; throw new Error("sent"); } });
  await assert.rejects(b.ask({ questions: [{ question: "Pick", header: "Far too long a header", options: [{ label: "A" }] }] }), (e) => {
    assert.equal(e.code, "invalid");
    assert.deepEqual(e.details, [
      { field: "questions[0].header", problem: "at most 12 characters" },
      { field: "questions[0].options", problem: "2 to 4 options, or none for an open-ended question; got 1" },
    ]);
    assert.equal(e.field, "questions[0].header");
    return true;
  });
  await assert.rejects(b.ask({ questions: [] }), (e) => e.field === "questions");
  await assert.rejects(b.ask({ question: "x", parent_run_id: "p" }), (e) => e.code === "subagent_not_allowed");
  // "Other" is added by every surface: the bridge's rule and words.
  for (const label of ["Other", "other…", "Something else"]) {
    await assert.rejects(b.ask({ questions: [{ question: "Which database?", header: "DB", options: [{ label: "Postgres" }, { label }] }] }), (e) => {
      assert.deepEqual(e.details, [{ field: "questions[0].options[1].label", problem: 'remove the "Other" option; the person can always answer in their own words ("Other" is added automatically)' }]);
      return true;
    });
  }
  assert.equal(calls, 0);
});

test("the API's refusals are typed: code, field and details", async () => {
  const b = client("errors");
  await assert.rejects(b.ask({ question: "Soon?", timeout: "1s" }), (e) => {
    assert.ok(e instanceof AskBridgeError);
    assert.equal(e.status, 400);
    assert.equal(e.code, "invalid");
    assert.equal(e.field, "timeout");
    return true;
  });
  await assert.rejects(b.get("00000000-0000-0000-0000-000000000000"), (e) => e.code === "not_found" && e.status === 404);
});

test("a bridge that is down gives a clear error naming the URL", async () => {
  const b = new AskBridge({ url: "http://127.0.0.1:9/", project: "p" });
  await assert.rejects(b.ask({ question: "Up?" }), (e) => e.code === "unreachable" && e.message.includes("http://127.0.0.1:9") && !e.message.includes("undefined"));
});

test("webhook verification reaches Go's verdict on every vector", { skip: !process.env.ASKBRIDGE_VECTORS && "ASKBRIDGE_VECTORS is written by go test ./clients" }, async () => {
  const vs = JSON.parse(readFileSync(process.env.ASKBRIDGE_VECTORS, "utf8"));
  assert.ok(vs.length >= 10);
  for (const v of vs) {
    const got = await verifyWebhook({ secret: v.secret, headers: { "X-Askbridge-Signature": v.header, "X-Askbridge-Delivery": v.delivery }, body: v.body, now: v.now * 1000 })
      .then((ev) => ({ ok: true, ev }), (e) => ({ ok: false, code: e.code }));
    assert.equal(got.ok, v.ok, v.name);
    if (v.ok) assert.equal(got.ev.deliveryId, v.delivery, v.name);
    else assert.equal(got.code, v.error, v.name);
  }
});

test("the Node and fetch handlers: the bridge's webhook resumes once; duplicates, forged and stale deliveries resume nothing", async (t) => {
  const events = [];
  const seen = [];
  const handle = nodeWebhookHandler({ secret, onEvent: (ev) => { events.push(ev); } });
  const recv = await listen(async (req, res) => {
    const chunks = [];
    for await (const c of req) chunks.push(c);
    const raw = Buffer.concat(chunks);
    seen.push({ headers: { ...req.headers }, raw });
    const replay = (await import("node:stream")).Readable.from([raw]);
    Object.assign(replay, { method: req.method, headers: req.headers });
    await handle(replay, res);
  });
  t.after(recv.close);
  const b = client("webhook");
  const q = await b.ask({ run_id: "wr", question: "Go?", options: [{ label: "Yes" }, { label: "No" }], resume: { url: `${recv.url}/resume` } });
  await b.pauseRun("wr");
  await b.respond(q.id, { response: "Yes", responded_by: maria });
  const until = Date.now() + 15000;
  while (events.length === 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
  assert.equal(events.length, 1);
  assert.equal(events[0].event, "question.answered");
  assert.equal(events[0].question.id, q.id);
  assert.equal(events[0].run.resumed_from, "wr");
  assert.ok(events[0].deliveryId);

  // The same delivery again (the bridge delivers at least once): acknowledged, not handled twice.
  const { headers, raw } = seen[0];
  const post = (h, body = raw) => fetch(`${recv.url}/resume`, { method: "POST", headers: { "content-type": "application/json", "x-askbridge-signature": h["x-askbridge-signature"], "x-askbridge-delivery": h["x-askbridge-delivery"] }, body });
  const dup = await post(headers);
  assert.equal(dup.status, 200);
  assert.equal((await dup.text()).trim(), "duplicate");
  // Forged body, and a captured signature under a new delivery id.
  assert.equal((await post(headers, Buffer.from(raw.toString().replace("Yes", "No")))).status, 401);
  assert.equal((await post({ ...headers, "x-askbridge-delivery": "other" })).status, 401);
  assert.equal(events.length, 1);

  // The fetch-API handler: stale signatures are refused.
  const fh = fetchWebhookHandler({ secret, onEvent: (ev) => { events.push(ev); } });
  const stale = headers["x-askbridge-signature"].replace(/t=\d+/, `t=${Math.floor(Date.now() / 1000) - 600}`);
  const r = await fh(new Request("http://x/", { method: "POST", headers: { "x-askbridge-signature": stale, "x-askbridge-delivery": headers["x-askbridge-delivery"] }, body: raw }));
  assert.equal(r.status, 401);
  const ok = await fh(new Request("http://x/", { method: "POST", headers: { "x-askbridge-signature": headers["x-askbridge-signature"], "x-askbridge-delivery": headers["x-askbridge-delivery"] }, body: raw }));
  assert.equal(ok.status, 200);
  assert.equal(events.length, 2, "a fresh handler (another process) handles the delivery once");
});

// A resume webhook signed as the bridge signs it (v1 and v2), at unix second ts.
function signed(key, id, body, ts) {
  const mac = (prefix) => createHmac("sha256", key).update(prefix).update(body).digest("hex");
  return { "x-askbridge-signature": `t=${ts},v1=${mac(`${ts}.`)},v2=${mac(`${ts}.${id}.`)}`, "x-askbridge-delivery": id, "content-type": "application/json" };
}
const resumeBody = JSON.stringify({ event: "question.answered", question: { id: "q1", status: "answered" }, run: { id: "r2", resumed_from: "r1", agent_id: "a", project_id: "p" }, user_message: "hi" });

test("webhook verifiers refuse an empty or missing secret, naming what to set", async () => {
  const ts = Math.floor(Date.now() / 1000);
  const headers = signed("", "d-1", resumeBody, ts); // anyone can sign with an empty key
  for (const [name, s] of [["empty string", ""], ["undefined", undefined], ["null", null], ["empty bytes", new Uint8Array(0)]]) {
    const names = (e) => e instanceof Error && /BRIDGE_WEBHOOK_SECRET/.test(e.message) && /secret/.test(e.message);
    await assert.rejects(verifyWebhook({ secret: s, headers, body: resumeBody }), names, `verifyWebhook, ${name}`);
    assert.throws(() => nodeWebhookHandler({ secret: s, onEvent: () => {} }), names, `nodeWebhookHandler, ${name}`);
    assert.throws(() => fetchWebhookHandler({ secret: s, onEvent: () => {} }), names, `fetchWebhookHandler, ${name}`);
  }
});

test("a handler that fails, then the bridge's retry in the same second: the retry is handled", async () => {
  const ts = Math.floor(Date.now() / 1000);
  for (const [name, headers] of [
    ["v1 and v2", signed(secret, "d-same", resumeBody, ts)],
    ["v1 only (older bridge)", (({ "x-askbridge-signature": sig, ...h }) => ({ ...h, "x-askbridge-signature": sig.replace(/,v2=.*/, "") }))(signed(secret, "d-same", resumeBody, ts))],
  ]) {
    let calls = 0;
    const fh = fetchWebhookHandler({ secret, onEvent: () => { if (++calls === 1) throw new Error("the runtime is restarting"); } });
    const post = (h = headers) => fh(new Request("http://x/", { method: "POST", headers: h, body: resumeBody }));
    assert.equal((await post()).status, 503, `${name}: the handler failed, the bridge retries`);
    assert.equal((await post()).status, 200, `${name}: the same-second retry is handled, not refused as a replay`);
    assert.equal(calls, 2, name);
    const dup = await post();
    assert.equal(dup.status, 200, name);
    assert.equal((await dup.text()).trim(), "duplicate", name);
    const v1 = headers["x-askbridge-signature"].replace(/,v2=.*/, "");
    assert.equal((await post({ ...headers, "x-askbridge-signature": v1, "x-askbridge-delivery": "d-other" })).status, 401, `${name}: a handled signature is never taken again`);
    assert.equal(calls, 2, name);
  }
});

test("approval outcomes fail closed and say why", async () => {
  const { approvalOutcome, approvalBody } = await import("askbridge");
  const base = { id: "q", kind: "approval", created_at: "2026-01-01T10:00:00Z", expires_at: "2026-01-01T10:30:00.4Z", updated_at: "2026-01-01T10:30:00Z", action: { tool: "deploy", input: { env: "prod" } } };
  assert.deepEqual(approvalOutcome({ ...base, status: "expired" }).reason, "nobody answered within 30 min");
  assert.equal(approvalOutcome({ ...base, status: "expired" }).approved, false);
  const dismissed = approvalOutcome({ ...base, status: "cancelled", cancel_reason: "user", cancel_note: "not on a Friday", responded_by: maria });
  assert.deepEqual([dismissed.approved, dismissed.reason], [false, "dismissed by maria: not on a Friday"]);
  assert.equal(approvalOutcome({ ...base, status: "cancelled", cancel_reason: "superseded" }).approved, false);
  assert.equal(approvalOutcome({ ...base, status: "answered", response: "Allow" }).approved, false, "an answer without a decision never approves");
  const edited = approvalOutcome({ ...base, status: "answered", decision: { behavior: "allow", digest: "d", input: { env: "staging" }, edited: true } });
  assert.deepEqual([edited.approved, edited.input, edited.edited], [true, { env: "staging" }, true]);
  assert.throws(() => approvalOutcome({ ...base, status: "pending" }), (e) => e.code === "pending");
  const b = approvalBody({ runId: "run", callId: "c1", tool: "deploy", input: { env: "prod" } });
  assert.deepEqual([b.run_id, b.action.call_id, b.idempotency_key, b.action.allow_edit], ["run", "c1", undefined, false], "the call id keys the approval in its run");
});

test("the agent's trace context goes with every request; the bridge keeps it with the question; a malformed one is not sent", async () => {
  const trace = "4bf92f3577b34da6a3ce929d0e0e4736";
  const traceparent = `00-${trace}-00f067aa0ba902b7-01`;
  const seen = [];
  const spy = (url, init) => { seen.push(init.headers); return fetch(url, init); };
  const project = `${process.env.BRIDGE_PROJECT}-trace-${process.pid}`;
  const b = new AskBridge({ url: process.env.BRIDGE_URL, project, traceparent, tracestate: "vendor=1", fetch: spy });
  const q = await b.ask({ run_id: "r-trace", agent_id: "bot", question: "Ship it?", options: [{ label: "Yes" }, { label: "No" }], timeout: "5m" });
  assert.equal(seen[0].traceparent, traceparent);
  assert.equal(seen[0].tracestate, "vendor=1");
  const res = await fetch(`${process.env.BRIDGE_URL}/api/projects/${project}/agent-questions/${q.id}`);
  assert.equal(res.status, 200);
  assert.match(res.headers.get("traceparent") ?? "", new RegExp(`^00-${trace}-`), "the question carries the agent's trace");
  await b.cancel(q.id, { reason: "user", note: "done" }).catch(() => {});

  for (const bad of ["00-zz-00f067aa0ba902b7-01", `00-${trace}-00f067aa0ba902b7-01\r\nx-evil: 1`, `00-${"0".repeat(32)}-00f067aa0ba902b7-01`]) {
    const sent = [];
    const c = new AskBridge({ url: process.env.BRIDGE_URL, project, traceparent: bad, tracestate: "vendor=1", fetch: (u, i) => { sent.push(i.headers); return fetch(u, i); } });
    await c.list();
    assert.equal(sent[0].traceparent, undefined, `not sent: ${JSON.stringify(bad)}`);
    assert.equal(sent[0].tracestate, undefined);
  }
});

test("the list reads every page: listPage gives one and its cursor, iterate and list go to the last", async () => {
  const b = client("pages");
  const ids = [];
  for (let i = 0; i < 7; i++) ids.push((await b.ask({ run_id: `p${i}`, agent_id: "bot", question: `Deploy ${i}?` })).id);
  const first = await b.listPage({ status: "pending", limit: 3 });
  assert.deepEqual(first.questions.map((q) => q.id), ids.slice(0, 3));
  assert.equal(typeof first.next_cursor, "string");
  const second = await b.listPage({ status: "pending", limit: 3, cursor: first.next_cursor });
  assert.deepEqual(second.questions.map((q) => q.id), ids.slice(3, 6));
  const last = await b.listPage({ status: "pending", limit: 3, cursor: second.next_cursor });
  assert.deepEqual(last.questions.map((q) => q.id), ids.slice(6));
  assert.equal(last.next_cursor, null, "null on the last page");
  const seen = [];
  for await (const q of b.iterate({ status: "pending", limit: 2 })) seen.push(q.id);
  assert.deepEqual(seen, ids, "iterate yields every page, oldest first");
  assert.deepEqual((await b.list({ status: "pending" })).map((q) => q.id), ids);
  await assert.rejects(b.listPage({ cursor: "nope" }), (e) => e instanceof AskBridgeError && e.code === "invalid" && e.details[0].field === "cursor");
});

test("approval batches: askApprovalBatch asks every call in one request, waitApprovalBatch returns once all are decided, call_id re-attaches", async () => {
  const b = client("batch-core");
  const call = (id, env) => ({ action: { tool: "deploy", input: { env }, call_id: id } });
  const asked = await b.askApprovalBatch({ run_id: "turn-1", agent_id: "bot", timeout: "5m", approvals: [call("c1", "e1"), call("c2", "e2"), call("c3", "e3")] });
  assert.equal(asked.calls.length, 3);
  assert.equal(asked.pending, 3);
  assert.deepEqual(new Set(asked.calls.map((q) => q.batch_id)), new Set([asked.batch_id]));
  assert.deepEqual(asked.calls.map((q) => q.action.call_id), ["c1", "c2", "c3"]);
  assert.match(asked.calls[0].questions[0].question, /^Allow deploy: .*e1/, "the default question names the tool and its argument");
  assert.match(asked.message, /3 approval/);
  // A single ask naming a call of the run re-attaches to its record, whatever the words.
  const again = await b.ask({ run_id: "turn-1", agent_id: "bot", kind: "approval", question: "Deploy e1 again?", options: [{ label: "Allow" }, { label: "Deny" }], action: { tool: "deploy", input: { env: "e1" }, call_id: "c1" } });
  assert.equal(again.id, asked.calls[0].id);
  // The client deadline passes with every call pending: they stay pending.
  await assert.rejects(b.waitApprovalBatch(asked.batch_id, { timeoutMs: 1000 }), (e) => e instanceof BatchWaitTimeoutError && e.code === "wait_timeout" && e.batch.pending === 3);
  const waiting = b.waitApprovalBatch(asked.batch_id);
  await b.respond(asked.calls[1].id, { reason: "not e2", responded_by: maria });
  const outcome = await b.respondApprovalBatch(asked.batch_id, { decision: "allow", responded_by: maria });
  assert.deepEqual(outcome.already, [asked.calls[1].id]);
  assert.deepEqual(outcome.decided.sort(), [asked.calls[0].id, asked.calls[2].id].sort());
  const done = await waiting;
  assert.equal(done.status, "decided");
  assert.equal(done.pending, 0);
  assert.deepEqual(done.questions.map((q) => q.decision.behavior), ["allow", "deny", "allow"]);
  assert.equal(done.questions[1].decision.message, "not e2");
  assert.deepEqual(await b.getApprovalBatch(asked.batch_id), done);
  // Every call is checked before any is asked: nothing is created.
  await assert.rejects(b.askApprovalBatch({ run_id: "turn-2", approvals: [call("d1", "x"), call("d1", "y")] }), (e) => e.status === 400 && e.field === "approvals[1].action.call_id");
  assert.equal((await b.list({ runId: "turn-2" })).length, 0);
});
