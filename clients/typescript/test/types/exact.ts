// Compile-time tests (npm run typecheck): what must compile does, and the
// line after each ts-expect-error directive must fail to compile (tsc
// reports a directive whose line compiles).
import { generateText, jsonSchema, tool, type LanguageModel } from "ai";
import { Agent, run } from "@openai/agents";
import { Annotation, END, MemorySaver, START, StateGraph } from "@langchain/langgraph";
import { AskBridge, approvalOutcome, type AskBody, type BatchBody, type Question, type WebhookEvent } from "askbridge";
import { askbridgeToolApproval, askUserTool } from "askbridge/ai";
import { askUserTool as agentsAskUser } from "askbridge/openai-agents";
import { approvalInterrupt, askInterrupts, resumeCommand, runWithAskbridge } from "askbridge/langgraph";

const bridge = new AskBridge({ url: "http://127.0.0.1:8080" });

// AskBody takes the API's fields and no other.
const ok: AskBody = { question: "Deploy?", options: [{ label: "Yes" }, { label: "No" }], timeout: "10s", on_timeout: { use_defaults: true } };
// @ts-expect-error a misspelt field does not compile
const typo: AskBody = { question: "Deploy?", timout: "10s" };
// @ts-expect-error nor does an unknown target platform
const target: AskBody = { question: "Deploy?", targets: [{ platform: "slak", channel: "C1" }] };
// A batch takes what its calls share at the top and one entry per call; a call has no run of its own.
const batch: BatchBody = { run_id: "turn-1", timeout: "10m", approvals: [{ action: { tool: "deploy", input: { env: "prod" }, call_id: "call-1" } }] };
// @ts-expect-error a call of a batch takes no run_id (the batch's run is every call's)
const perCallRun: BatchBody = { approvals: [{ run_id: "other", action: { tool: "deploy" } }] };
// @ts-expect-error nor a question's items: a call is one approval
const items: BatchBody = { approvals: [{ questions: [{ question: "Deploy?" }] }] };
// @ts-expect-error records have no fields the API does not send
declare const q: Question; q.nonsense;

// An approval's input is the asked input's type once approved.
const outcome = approvalOutcome<{ env: string }>(q);
if (outcome.approved) {
  const env: string = outcome.input.env;
} else {
  const why: string = outcome.reason;
  // @ts-expect-error a denial carries no input to run
  outcome.input.env;
}

// LangGraph: the decision follows the node's input; the driver returns the graph's state.
const State = Annotation.Root({ outcome: Annotation<string> });
const graph = new StateGraph(State)
  .addNode("deploy", () => {
    const d = approvalInterrupt({ tool: "deploy", input: { env: "prod", replicas: 3 } });
    if (!d.approved) return { outcome: `not deployed: ${d.reason}` };
    const replicas: number = d.input.replicas;
    // @ts-expect-error not a field of the input
    d.input.region;
    return { outcome: `deployed ${d.input.env} x${replicas}` };
  })
  .addEdge(START, "deploy")
  .addEdge("deploy", END)
  .compile({ checkpointer: new MemorySaver() });
const config = { configurable: { thread_id: "t1" } };
const final = await runWithAskbridge(bridge, graph, { outcome: "" }, config);
const text: string = final.outcome;
// @ts-expect-error the final state has the graph's fields only
final.nothing;
const first = await graph.invoke({ outcome: "" }, config);
await askInterrupts(bridge, first, config, { resumeUrl: "https://agent.example.com/resume" });
declare const event: WebhookEvent;
const cmd = await resumeCommand(bridge, graph, config, event);
if (cmd) await graph.invoke(cmd, config);

// The AI SDK: ask_user is a tool of the ToolSet, the approval hook fits toolApproval.
declare const model: LanguageModel;
const deploy = tool({ description: "Deploy", inputSchema: jsonSchema<{ env: string }>({ type: "object", properties: { env: { type: "string" } } }), execute: async ({ env }) => `deployed ${env}` });
const r = await generateText({ model, tools: { deploy, ask_user: askUserTool(bridge, { runId: "chat-1" }) }, prompt: "Deploy", toolApproval: askbridgeToolApproval(bridge, { runId: "chat-1" }) });
for (const res of r.toolResults) if (res.toolName === "ask_user" && !res.dynamic) res.output.result.status;

// OpenAI Agents: ask_user is a tool of the agent.
const agent = new Agent({ name: "Deployer", instructions: "Ask before deploying.", tools: [agentsAskUser(bridge, { runId: "run-1" })] });
await run(agent, "Deploy");

export { ok, typo, target, text };
