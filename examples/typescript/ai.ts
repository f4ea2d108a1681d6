// Vercel AI SDK: a tool call waits for a person's approval in askbridge.
// Runs offline on the SDK's mock model; BRIDGE_URL and BRIDGE_PROJECT say
// where to ask. Prints the run's outcome as one JSON line.
import { generateText, jsonSchema, tool, type ModelMessage } from "ai";
import { MockLanguageModelV4 } from "ai/test";
import { AskBridge } from "askbridge";
import { decideToolApprovals } from "askbridge/ai";

const usage = { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 1, text: 1, reasoning: 0 } };
const model = new MockLanguageModelV4({
  doGenerate: [
    { content: [{ type: "tool-call", toolCallId: "call-1", toolName: "deploy", input: '{"env":"prod"}' }], finishReason: { unified: "tool-calls", raw: undefined }, usage, warnings: [] },
    { content: [{ type: "text", text: "done" }], finishReason: { unified: "stop", raw: undefined }, usage, warnings: [] },
  ],
});
let output: string | undefined; // what the tool did, if it ran
const tools = {
  deploy: tool({ description: "Deploy", inputSchema: jsonSchema<{ env: string }>({ type: "object", properties: { env: { type: "string" } } }), execute: async ({ env }) => (output = `deployed ${env}`) }),
};

const bridge = new AskBridge(); // BRIDGE_URL, BRIDGE_PROJECT, BRIDGE_TOKEN
const messages: ModelMessage[] = [{ role: "user", content: "Deploy to prod" }];
const first = await generateText({ model, tools, messages, toolApproval: { deploy: "user-approval" } });
const approvals = await decideToolApprovals(bridge, first.content, { runId: `ai-example-${process.pid}` });
if (approvals) messages.push(...first.response.messages, approvals);
const final = await generateText({ model, tools, messages, toolApproval: { deploy: "user-approval" } });
const denied = approvals?.content.find((a) => !a.approved);
console.log(JSON.stringify({ framework: "ai", approved: !denied, reason: denied?.reason, output, final: final.text }));
