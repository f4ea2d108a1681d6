// npm test: runs test/*.test.mjs (node --test) against a real bridge.
// With BRIDGE_URL set (and BRIDGE_WEBHOOK_SECRET, that bridge's
// webhooks.secret) it uses that bridge; otherwise it builds askbridge from
// this repository with Go and starts it on a free loopback port with its own
// data directory, and stops it afterwards. Arguments are passed to node --test
// (e.g. npm test -- test/core.test.mjs).
import { spawn, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const here = import.meta.dirname;
const files = process.argv.slice(2).length ? process.argv.slice(2) : readdirSync(here).filter((f) => f.endsWith(".test.mjs")).map((f) => join("test", f));
const env = { ...process.env, OPENAI_AGENTS_DISABLE_TRACING: "1" };
let bridge;
let tmp;

function fail(msg) {
  console.error(`npm test: ${msg}`);
  process.exit(1);
}

if (!env.BRIDGE_URL) {
  const repo = resolve(here, "..", "..", "..");
  tmp = mkdtempSync(join(tmpdir(), "askbridge-npm-test-"));
  const bin = join(tmp, "askbridge");
  const go = spawnSync("go", ["build", "-o", bin, "./cmd/bridge"], { cwd: repo, stdio: ["ignore", "inherit", "inherit"] });
  if (go.error || go.status !== 0) {
    rmSync(tmp, { recursive: true, force: true });
    fail(`no bridge to test against: set BRIDGE_URL (and BRIDGE_WEBHOOK_SECRET, that bridge's webhooks.secret), or install Go so the tests can build askbridge from ${repo}${go.error ? ` (${go.error.message})` : ""}`);
  }
  const secret = randomBytes(16).toString("hex");
  const bridgeEnv = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(BRIDGE_|SLACK_|DISCORD_)|^REDIS_URL$/.test(k)));
  bridge = spawn(bin, ["serve", "--addr", "127.0.0.1:0"], { env: { ...bridgeEnv, BRIDGE_DATA_DIR: join(tmp, "data"), BRIDGE_WEBHOOK_SECRET: secret }, stdio: ["ignore", "pipe", "pipe"] });
  let log = "";
  bridge.stderr.on("data", (d) => (log += d));
  const url = await new Promise((ok, no) => {
    let out = "";
    bridge.stdout.on("data", (d) => {
      out += d;
      const m = /listening on (http:\/\/[0-9.:]+)/.exec(out);
      if (m) ok(m[1]);
    });
    bridge.on("exit", (code) => no(new Error(`askbridge serve exited (${code}) before listening:\n${log}`)));
    setTimeout(() => no(new Error(`askbridge serve did not start within 30 s:\n${log}`)), 30000).unref();
  }).catch((e) => fail(e.message));
  Object.assign(env, { BRIDGE_URL: url, BRIDGE_PROJECT: "npm-test", BRIDGE_WEBHOOK_SECRET: secret });
  console.log(`npm test: askbridge serve at ${url}`);
}

const tests = spawn(process.execPath, ["--test", "--test-reporter=spec", "--test-concurrency=4", ...files], { cwd: resolve(here, ".."), env, stdio: "inherit" });
const code = await new Promise((ok) => tests.on("exit", (c, sig) => ok(c ?? (sig ? 1 : 0))));
if (bridge && bridge.exitCode === null) {
  const exited = new Promise((ok) => bridge.on("exit", ok));
  bridge.kill("SIGTERM");
  await exited;
}
if (tmp) rmSync(tmp, { recursive: true, force: true });
process.exit(code);
