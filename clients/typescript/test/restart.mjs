// Run by clients/restart_test.go (not a test file of its own): asks, prints
// the question id, waits while the test restarts the bridge, and prints
// the final record's status and response.
import { AskBridge } from "askbridge";

const b = new AskBridge();
const q = await b.ask({ run_id: "restart-ts", question: "Still there after the restart?", options: [{ label: "Yes" }, { label: "No" }], timeout: "10m" });
console.log(q.id);
const done = await b.wait(q.id, { pollSeconds: 60 });
console.log(JSON.stringify({ status: done.status, response: done.response }));
