// ACP conformance of `reasonix acp` through the official TypeScript SDK,
// a client no one in this project wrote. Run by the Go test
// TestACPConformance (cmd/reasonix), which builds the binary, points it at
// a scripted fake model and checks what the model was sent; never on its
// own. Usage: node conformance.mjs BINARY WORKDIR1 WORKDIR2 PLUGIN
// It prints one line per check and exits non-zero on the first failure.
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";

const [binary, work1, work2, plugin] = process.argv.slice(2);

function check(cond, what, detail) {
  if (!cond) {
    console.error(`FAIL ${what}${detail === undefined ? "" : ": " + JSON.stringify(detail)}`);
    process.exit(1);
  }
  console.log(`ok ${what}`);
}

async function rejects(promise) {
  try {
    await promise;
  } catch (e) {
    return e;
  }
  return null;
}

const child = spawn(binary, ["acp"], { cwd: work1, stdio: ["pipe", "pipe", "inherit"] });
const updates = []; // {sessionId, update}
const waiters = [];
let onPermission = async () => "allow_once";

const app = acp
  .client()
  .onNotification("session/update", ({ params }) => {
    updates.push(params);
    for (const w of waiters.splice(0)) w();
  })
  .onRequest("session/request_permission", async ({ params }) => {
    const choice = await onPermission(params);
    return choice
      ? { outcome: { outcome: "selected", optionId: choice } }
      : { outcome: { outcome: "cancelled" } };
  });
const stream = acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));
const conn = app.connect(stream);
const agent = conn.agent;

const of = (id) => updates.filter((u) => u.sessionId === id).map((u) => u.update);
const text = (id) =>
  of(id)
    .filter((u) => u.sessionUpdate === "agent_message_chunk")
    .map((u) => u.content.text)
    .join("");
const waitUpdate = (pred) =>
  new Promise((resolve) => {
    const test = () => (updates.some(pred) ? resolve() : waiters.push(test));
    test();
  });
const prompt = (sessionId, t) => agent.request("session/prompt", { sessionId, prompt: [{ type: "text", text: t }] });

// initialize
const init = await agent.request("initialize", {
  protocolVersion: 1,
  clientCapabilities: {},
  clientInfo: { name: "ts-conformance", version: "1" },
});
const caps = init.agentCapabilities;
check(init.protocolVersion === 1 && caps.loadSession === true, "initialize: protocol 1, loadSession");
check(["list", "resume", "close", "delete"].every((k) => caps.sessionCapabilities?.[k]), "initialize: session capabilities", caps.sessionCapabilities);
check(caps.promptCapabilities?.embeddedContext === true && caps.mcpCapabilities?.http === true, "initialize: embedded context, MCP http");
const steerMethod = caps._meta?.["reasonix.io"]?.sessionSteer?.method;
check(steerMethod === "_reasonix.io/session/steer", "initialize: steer extension advertised", caps._meta);

// new + prompt, permission allowed
const a = (await agent.request("session/new", { cwd: work1, mcpServers: [] })).sessionId;
onPermission = async (p) => (JSON.stringify(p.toolCall).includes("a.txt") ? "allow_once" : "reject");
let res = await prompt(a, "write a.txt");
check(res.stopReason === "end_turn", "prompt: end_turn", res);
check(existsSync(join(work1, "a.txt")), "permission allowed: the write ran");
check(of(a).some((u) => u.sessionUpdate === "tool_call" && u.kind === "edit"), "prompt: tool_call with kind edit");
check(of(a).some((u) => u.sessionUpdate === "tool_call_update" && u.status === "completed"), "prompt: tool_call_update completed");
check(text(a) === "wrote it", "prompt: agent_message_chunk streamed", text(a));

// permission rejected
res = await prompt(a, "write b.txt");
check(res.stopReason === "end_turn" && !existsSync(join(work1, "b.txt")), "permission rejected: the write did not run");

// steer without a prompt, and the unnamespaced name
let err = await rejects(agent.request(steerMethod, { sessionId: a, prompt: [{ type: "text", text: "x" }] }));
check(err?.code === -32600, "steer without an active prompt: -32600", err?.code);
err = await rejects(agent.request("session/steer", { sessionId: a, prompt: [{ type: "text", text: "x" }] }));
check(err?.code === -32601, "session/steer: -32601", err?.code);
err = await rejects(agent.request(steerMethod, { sessionId: "s_00000000000000000000", prompt: [{ type: "text", text: "x" }] }));
check(err?.code === -32602, "steer of an unknown session: -32602", err?.code);

// steer mid-turn: while the permission request waits
onPermission = async () => {
  const r = await agent.request(steerMethod, { sessionId: a, prompt: [{ type: "text", text: "STEER: use email instead of username" }] });
  check(r && Object.keys(r).length === 0, "steer mid-turn: {}", r);
  return "allow_once";
};
res = await prompt(a, "write c.txt");
check(res.stopReason === "end_turn", "steer did not cancel the turn", res);

// cancel mid-turn: the model stalls after its first words
const stalled = prompt(a, "think for a long time");
await waitUpdate((u) => u.sessionId === a && u.update.sessionUpdate === "agent_message_chunk" && u.update.content.text.includes("think"));
await agent.notify("session/cancel", { sessionId: a });
res = await stalled;
check(res.stopReason === "cancelled", "cancel mid-turn: cancelled", res);

check(of(a).some((u) => u.sessionUpdate === "available_commands_update"), "available_commands_update sent");

// two sessions at once
const b = (await agent.request("session/new", { cwd: work2, mcpServers: [] })).sessionId;
const c = (await agent.request("session/new", { cwd: work2, mcpServers: [] })).sessionId;
const [rb, rc] = await Promise.all([prompt(b, "hello b"), prompt(c, "hello c")]);
check(rb.stopReason === "end_turn" && rc.stopReason === "end_turn", "two sessions: both end_turn");
check(text(b) === "same" && text(c) === "same", "two sessions: each saw only its own answer", [text(b), text(c)]);

// an MCP server passed in session/new (the stdio shape, env as [{name, value}])
const m = (
  await agent.request("session/new", {
    cwd: work2,
    mcpServers: [{ name: "ex", command: plugin, args: [], env: [{ name: "EXAMPLE", value: "1" }] }],
  })
).sessionId;
res = await prompt(m, "echo through the plugin");
check(res.stopReason === "end_turn", "MCP from session/new: end_turn", res);
check(of(m).some((u) => u.sessionUpdate === "tool_call_update" && u.status === "completed" && JSON.stringify(u).includes("from the plugin")),
  "MCP from session/new: the plugin's tool ran", of(m));

// the model's reasoning as agent_thought_chunk; an answer cut at the output
// limit ends with max_tokens
res = await prompt(m, "think out loud");
check(res.stopReason === "max_tokens", "an answer cut at the output limit: max_tokens", res);
const thought = of(m).filter((u) => u.sessionUpdate === "agent_thought_chunk").map((u) => u.content.text).join("");
check(thought === "pondering the plugin", "reasoning streams as agent_thought_chunk", thought);

// list, close, load (replay), resume, delete
let list = await agent.request("session/list", { cwd: work1 });
check(list.sessions.length === 1 && list.sessions[0].sessionId === a, "list: filtered by cwd", list);
await agent.request("session/close", { sessionId: a });
const before = of(a).length;
await agent.request("session/load", { sessionId: a, cwd: work1, mcpServers: [] });
const replayed = of(a).slice(before);
check(replayed.some((u) => u.sessionUpdate === "user_message_chunk" && u.content.text === "write a.txt"), "load: replays the user's prompt");
check(replayed.some((u) => u.sessionUpdate === "user_message_chunk" && u.content.text.startsWith("STEER:")), "load: replays the steer as the user's words");
await agent.request("session/close", { sessionId: a });
const beforeResume = of(a).length;
await agent.request("session/resume", { sessionId: a, cwd: work1 });
check(!of(a).slice(beforeResume).some((u) => u.sessionUpdate.endsWith("message_chunk") || u.sessionUpdate.startsWith("tool_call")), "resume: no replay");
await agent.request("session/delete", { sessionId: a });
list = await agent.request("session/list", { cwd: work1 });
check(list.sessions.length === 0, "delete: gone from the list", list);

child.stdin.end();
const code = await new Promise((resolve) => child.on("exit", resolve));
check(code === 0, "the agent exits 0 when stdin closes", code);
