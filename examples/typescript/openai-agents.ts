// OpenAI Agents SDK: a tool with needsApproval waits for a person in
// askbridge. Runs offline on the SDK's scripted model; BRIDGE_URL and
// BRIDGE_PROJECT say where to ask. Prints the outcome as one JSON line.
import { Agent, run, tool } from "@openai/agents";
import { ScriptedModel, assistantMessage, functionCall } from "@openai/agents-core/testing";
import { AskBridge } from "askbridge";
import { decideInterruptions } from "askbridge/openai-agents";

const deploy = tool({
  name: "deploy", description: "Deploy", needsApproval: true, strict: true,
  parameters: { type: "object", properties: { env: { type: "string" } }, required: ["env"], additionalProperties: false },
  execute: async (args) => `deployed ${(args as { env: string }).env}`,
});
const model = new ScriptedModel([[functionCall("deploy", { env: "prod" }, { callId: "call-1" })], [assistantMessage("done")]]);
const agent = new Agent({ name: "Deployer", instructions: "Deploy when asked.", model, tools: [deploy] });

const bridge = new AskBridge(); // BRIDGE_URL, BRIDGE_PROJECT, BRIDGE_TOKEN
let result = await run(agent, "Deploy to prod");
while (result.interruptions?.length) {
  result = await run(agent, await decideInterruptions(bridge, result, { runId: `oa-example-${process.pid}` }));
}
const output = result.newItems.find((i) => i.type === "tool_call_output_item");
console.log(JSON.stringify({ framework: "openai-agents", output: output?.type === "tool_call_output_item" ? output.output : undefined, final: result.finalOutput }));
