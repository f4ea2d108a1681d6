// What the snippets of docs/typescript.md take as given (your model, tools,
// messages, agent…): TestTypeScriptDocs type-checks every snippet with these.
import type * as nodeHttp from "node:http";
import type { LanguageModel, ModelMessage, ToolSet } from "ai";
import type { Agent } from "@openai/agents";
import type { AskBridge, WebhookEvent } from "askbridge";

declare global {
  const bridge: AskBridge;
  const model: LanguageModel;
  const tools: ToolSet;
  const messages: ModelMessage[];
  const chatId: string;
  const agent: Agent;
  const input: string;
  const runId: string;
  const secret: string;
  const req: nodeHttp.IncomingMessage;
  const rawBody: Buffer;
  const http: typeof nodeHttp;
  function onEvent(ev: WebhookEvent): Promise<void>;
}
