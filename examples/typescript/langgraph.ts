// LangGraph.js: a node asks a person to approve (and maybe edit) a deploy
// through askbridge with interrupt(); no model needed. BRIDGE_URL and
// BRIDGE_PROJECT say where to ask. Prints the outcome as one JSON line.
import { Annotation, END, MemorySaver, START, StateGraph } from "@langchain/langgraph";
import { AskBridge } from "askbridge";
import { approvalInterrupt, runWithAskbridge } from "askbridge/langgraph";

const State = Annotation.Root({ outcome: Annotation<string> });
const graph = new StateGraph(State)
  .addNode("deploy", () => {
    const d = approvalInterrupt({ tool: "deploy", input: { env: "prod" } });
    return { outcome: d.approved ? `deployed ${String(d.input?.env)}${d.edited ? " (edited)" : ""}` : `not deployed: ${d.reason}` };
  })
  .addEdge(START, "deploy")
  .addEdge("deploy", END)
  .compile({ checkpointer: new MemorySaver() });

const bridge = new AskBridge(); // BRIDGE_URL, BRIDGE_PROJECT, BRIDGE_TOKEN
const config = { configurable: { thread_id: `lg-example-${process.pid}` } };
const final = await runWithAskbridge(bridge, graph, { outcome: "" }, config);
console.log(JSON.stringify({ framework: "langgraph", outcome: final.outcome }));
