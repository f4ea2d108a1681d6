// Shared by the tests: the bridge under test (BRIDGE_URL, BRIDGE_PROJECT,
// BRIDGE_WEBHOOK_SECRET, set by clients/clients_test.go) and a person who
// answers through the API, as a click in Slack would.
import { createServer } from "node:http";
import { AskBridge } from "askbridge";

export const secret = process.env.BRIDGE_WEBHOOK_SECRET;

let n = 0;
/** A client on a project of its own, so tests running side by side never see each other's questions. */
export function client(name) {
  return new AskBridge({ url: process.env.BRIDGE_URL, project: `${process.env.BRIDGE_PROJECT}-${name}-${process.pid}-${++n}` });
}

/** Waits until the run's (or project's) pending questions number `count`, then returns them. */
export async function pending(bridge, count = 1, { runPrefix = "" } = {}) {
  const until = Date.now() + 20000;
  for (;;) {
    const qs = (await bridge.list({ status: "pending" })).filter((q) => q.run_id.startsWith(runPrefix));
    if (qs.length >= count) return qs;
    if (Date.now() > until) throw new Error(`expected ${count} pending questions, have ${qs.length}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export const maria = { platform: "slack", id: "U0MARIA", name: "maria" };

/** A person's decision on a pending approval: allow, edit, deny (with a note), always, dismiss. */
export async function decide(bridge, q, how) {
  switch (how.kind) {
    case "allow":
      return bridge.respond(q.id, { response: "Allow", responded_by: maria });
    case "always":
      return bridge.respond(q.id, { rule: 0, responded_by: maria });
    case "edit":
      return bridge.respond(q.id, { edited_input: how.input, responded_by: maria });
    case "deny":
      return bridge.respond(q.id, { reason: how.note, responded_by: maria });
    case "dismiss":
      return bridge.cancel(q.id, { reason: "user", note: how.note });
    case "expire":
      return undefined; // nobody answers
  }
  throw new Error(`unknown decision ${how.kind}`);
}

/** A loopback HTTP server; resolves to {url, close}. */
export async function listen(handler) {
  const srv = createServer(handler);
  await new Promise((r) => srv.listen(0, "127.0.0.1", r));
  // close also drops the bridge's open connections: one it dialled and never
  // used would otherwise hold the test until its client gives up (90 s).
  return { url: `http://127.0.0.1:${srv.address().port}`, close: () => new Promise((r) => { srv.close(r); srv.closeAllConnections(); }) };
}
