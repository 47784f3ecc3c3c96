// The editor's terminal through the official TypeScript SDK: a client
// that advertises `terminal` and runs terminal/create's command as an
// editor does. Run by the Go test TestACPConformanceTerminal
// (cmd/reasonix), never on its own. Usage: node terminal.mjs BINARY WORKDIR
// The model's script runs one bash call, `echo out; echo err >&2; exit 3`.
// It prints one line per check and exits non-zero on the first failure.
import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";

const [binary, work] = process.argv.slice(2);

function check(cond, what, detail) {
  if (!cond) {
    console.error(`FAIL ${what}${detail === undefined ? "" : ": " + JSON.stringify(detail)}`);
    process.exit(1);
  }
  console.log(`ok ${what}`);
}

const child = spawn(binary, ["acp"], { cwd: work, stdio: ["pipe", "pipe", "inherit"] });
const updates = [];
const terminals = new Map(); // id -> {req, output, exit: Promise<code>, released}

const app = acp
  .client()
  .onNotification("session/update", ({ params }) => {
    updates.push(params.update);
  })
  .onRequest("session/request_permission", async () => ({ outcome: { outcome: "selected", optionId: "allow_once" } }))
  .onRequest("terminal/create", async ({ params }) => {
    const env = { PATH: process.env.PATH };
    for (const v of params.env ?? []) env[v.name] = v.value;
    const proc = spawn(params.command, params.args ?? [], { cwd: params.cwd, env, stdio: ["ignore", "pipe", "pipe"] });
    const t = { req: params, output: "", released: false };
    proc.stdout.on("data", (d) => (t.output += d));
    proc.stderr.on("data", (d) => (t.output += d));
    t.exit = new Promise((resolve) => proc.on("close", (code, signal) => resolve({ exitCode: code, signal })));
    t.proc = proc;
    const id = `term-${terminals.size + 1}`;
    terminals.set(id, t);
    return { terminalId: id };
  })
  .onRequest("terminal/output", async ({ params }) => ({ output: terminals.get(params.terminalId).output, truncated: false }))
  .onRequest("terminal/wait_for_exit", async ({ params }) => await terminals.get(params.terminalId).exit)
  .onRequest("terminal/kill", async ({ params }) => {
    terminals.get(params.terminalId).proc.kill();
    return {};
  })
  .onRequest("terminal/release", async ({ params }) => {
    const t = terminals.get(params.terminalId);
    t.released = true;
    t.proc.kill();
    return {};
  });
const stream = acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));
const agent = app.connect(stream).agent;

await agent.request("initialize", {
  protocolVersion: 1,
  clientCapabilities: { terminal: true },
  clientInfo: { name: "ts-terminal", version: "1" },
});
const s = (await agent.request("session/new", { cwd: work, mcpServers: [] })).sessionId;
const res = await agent.request("session/prompt", { sessionId: s, prompt: [{ type: "text", text: "run it" }] });
check(res.stopReason === "end_turn", "prompt: end_turn", res);
check(terminals.size === 1, "terminal/create: one terminal", [...terminals.keys()]);
const t = terminals.get("term-1");
check(t.req.command === binary && t.req.args[0] === "acp" && t.req.args[1] === "attach", "terminal/create: reasonix acp attach", t.req);
check(!t.req.args.some((a) => /^[0-9a-f]{64}$/.test(a)) && t.req.env.some((v) => v.name === "REASONIX_ATTACH_TOKEN"), "terminal/create: the token in env, not argv");
const exit = await t.exit;
check(t.output === "out\nerr\n" && exit.exitCode === 3, "the terminal showed the command's output and exit status", { output: t.output, exit });
check(t.released, "terminal/release");
const cards = updates.filter((u) => u.toolCallId === "b1" && (u.content ?? []).some((c) => c.type === "terminal" && c.terminalId === "term-1"));
check(cards.length >= 1 && cards.at(-1).status === "completed", "the call's card shows the terminal, to its completion", cards);
child.stdin.end();
await new Promise((resolve) => child.on("close", resolve));
console.log("ok done");
