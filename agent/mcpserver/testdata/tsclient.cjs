// A host nobody here wrote: the official MCP TypeScript SDK client, driven
// by the Go tests. Usage: node tsclient.cjs '<json config>'
//   {"sdk": "<dir holding node_modules>", "transport": "stdio"|"http",
//    "command", "args", "env" (stdio) | "url", "token" (http),
//    "elicit": null | {"content": {...}} | "hang", "arguments": {...},
//    "callTimeout": ms (default 120000)}
// Prints one JSON line: {"tools", "result", "elicited", "elicitAborted"}.
const path = require('path');
const { createRequire } = require('module');
const cfg = JSON.parse(process.argv[2]);
const req = createRequire(path.join(cfg.sdk, 'node_modules') + path.sep);
const { Client } = req('@modelcontextprotocol/sdk/client/index.js');
const { StdioClientTransport } = req('@modelcontextprotocol/sdk/client/stdio.js');
const { StreamableHTTPClientTransport } = req('@modelcontextprotocol/sdk/client/streamableHttp.js');
const { ElicitRequestSchema } = req('@modelcontextprotocol/sdk/types.js');

async function main() {
  const caps = cfg.elicit ? { elicitation: { form: {} } } : {};
  const client = new Client({ name: 'ts-host', version: '1.0.0' }, { capabilities: caps });
  const out = { elicited: null, elicitAborted: false };
  if (cfg.elicit) {
    client.setRequestHandler(ElicitRequestSchema, async (request, extra) => {
      out.elicited = request.params;
      if (cfg.elicit === 'hang') {
        await new Promise((resolve) => extra.signal.addEventListener('abort', resolve));
        out.elicitAborted = true;
        return { action: 'cancel' };
      }
      return { action: 'accept', content: cfg.elicit.content };
    });
  }
  let transport;
  if (cfg.transport === 'stdio') {
    transport = new StdioClientTransport({ command: cfg.command, args: cfg.args, env: cfg.env, stderr: 'inherit' });
  } else {
    const headers = cfg.token ? { Authorization: 'Bearer ' + cfg.token } : {};
    transport = new StreamableHTTPClientTransport(new URL(cfg.url), { requestInit: { headers } });
  }
  await client.connect(transport);
  out.tools = (await client.listTools()).tools;
  out.result = await client.callTool({ name: 'ask_user', arguments: cfg.arguments }, undefined,
    { timeout: cfg.callTimeout || 120000, resetTimeoutOnProgress: true });
  // Let a withdrawn form's cancellation arrive before closing.
  if (cfg.elicit === 'hang') {
    for (let i = 0; i < 50 && !out.elicitAborted; i++) await new Promise((r) => setTimeout(r, 100));
  }
  process.stdout.write(JSON.stringify(out) + '\n');
  await client.close();
}

main().then(() => process.exit(0), (err) => {
  process.stderr.write('tsclient: ' + (err && err.stack || err) + '\n');
  process.exit(1);
});
