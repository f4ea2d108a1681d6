// LangGraph.js: a node asks a person to approve (and maybe edit) a deploy
// through askbridge with interrupt(); no model needed. BRIDGE_URL and
// BRIDGE_PROJECT say where to ask. The graph is checkpointed in
// langgraph-example.db: stopped while the approval is pending and run again,
// it waits on the same approval. Prints the outcome as one JSON line.
import { Annotation, END, START, StateGraph } from "@langchain/langgraph";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { AskBridge } from "askbridge";
import { approvalInterrupt, runWithAskbridge } from "askbridge/langgraph";

const State = Annotation.Root({ outcome: Annotation<string> });
const graph = new StateGraph(State)
  .addNode("deploy", () => {
    const d = approvalInterrupt({ tool: "deploy", input: { env: "prod" } });
    return { outcome: d.approved ? `deployed ${d.input.env}${d.edited ? " (edited)" : ""}` : `not deployed: ${d.reason}` };
  })
  .addEdge(START, "deploy")
  .addEdge("deploy", END)
  .compile({ checkpointer: SqliteSaver.fromConnString("langgraph-example.db") });

const bridge = new AskBridge(); // BRIDGE_URL, BRIDGE_PROJECT, BRIDGE_TOKEN
const config = { configurable: { thread_id: "langgraph-example" } };
const final = await runWithAskbridge(bridge, graph, { outcome: "" }, config);
console.log(JSON.stringify({ framework: "langgraph", outcome: final.outcome }));
