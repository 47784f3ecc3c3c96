// ACP conformance of `reasonix acp --server URL` through the official
// TypeScript SDK: the editor as a window onto a task the service runs.
// Run by the Go test TestACPConformanceServer (cmd/reasonix), which starts
// `reasonix serve` with a scripted fake model and submits a task through
// the API that waits for an approval, and a goal task blocked on a
// question; never on its own.
// Usage: node server.mjs BINARY WORKDIR URL TASK_ID GOAL_TASK_ID
// It prints one line per check and exits non-zero on the first failure.
import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";

const [binary, work, url, taskId, goalId] = process.argv.slice(2);

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

const child = spawn(binary, ["acp", "--server", url], { cwd: work, stdio: ["pipe", "pipe", "inherit"] });
const updates = [];
const waiters = [];
const permissions = [];

const app = acp
  .client()
  .onNotification("session/update", ({ params }) => {
    updates.push(params);
    for (const w of waiters.splice(0)) w();
  })
  .onRequest("session/request_permission", async ({ params }) => {
    permissions.push(params);
    for (const w of waiters.splice(0)) w();
    // A goal's question: let it go on with its best judgement.
    const goOn = String(params.toolCall.toolCallId).startsWith("goal-question-");
    return { outcome: { outcome: "selected", optionId: goOn ? "go_on" : "allow_once" } };
  });
const stream = acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));
const agent = app.connect(stream).agent;

const of = (id) => updates.filter((u) => u.sessionId === id).map((u) => u.update);
const said = (id, kind) =>
  of(id)
    .filter((u) => u.sessionUpdate === kind)
    .map((u) => u.content.text)
    .join("");
const until = (cond) =>
  new Promise((resolve) => {
    const test = () => (cond() ? resolve() : waiters.push(test));
    test();
  });

const init = await agent.request("initialize", {
  protocolVersion: 1,
  clientCapabilities: {},
  clientInfo: { name: "ts-conformance", version: "1" },
});
const caps = init.agentCapabilities;
check(init.protocolVersion === 1 && caps.loadSession === true, "initialize: protocol 1, loadSession");
check(caps.sessionCapabilities?.list && !caps.sessionCapabilities?.delete, "initialize: list, no delete", caps.sessionCapabilities);
check(caps._meta?.["reasonix.io"]?.server === url, "initialize: the server in _meta", caps._meta);

const list = await agent.request("session/list", {});
check(list.sessions.some((s) => s.sessionId === taskId && s.title), "list: the API's task is a session", list);

await agent.request("session/load", { sessionId: taskId, cwd: work, mcpServers: [] });
check(of(taskId).some((u) => u.sessionUpdate === "agent_thought_chunk" && u.content.text.includes("waiting approval")),
  "load: replays the task's log", of(taskId));

await until(() => permissions.length > 0);
const p = permissions[0];
check(p.sessionId === taskId && p.toolCall.title.includes("echo approved-run") && p._meta?.["reasonix.io"]?.callHash,
  "the pending approval is a permission request", p);
check(p.options.some((o) => o.optionId === "allow_once") && p.options.some((o) => o.optionId === "reject"), "permission: allow once and reject offered", p.options);

await until(() => said(taskId, "agent_thought_chunk").includes("Task succeeded"));
check(of(taskId).some((u) => u.sessionUpdate === "tool_call" && u.status === "in_progress"), "follow: the approved call ran live");
check(said(taskId, "agent_message_chunk").includes("approved-run"), "follow: the task's answer", said(taskId, "agent_message_chunk"));

const err = await rejects(agent.request("session/new", { cwd: work, mcpServers: [] }));
check(err?.code === -32602 && String(err?.message).includes("no workspace"), "new: a cwd no workspace holds is -32602", err);

await agent.request("session/close", { sessionId: taskId });

// A goal task blocked on its question: loading it asks the question as a
// goal-question card; "go on" is answered on the service and the goal
// resumes, followed live to its end.
await agent.request("session/load", { sessionId: goalId, cwd: work, mcpServers: [] });
await until(() => permissions.length > 1);
const q = permissions[1];
check(q.sessionId === goalId && q.toolCall.toolCallId.startsWith("goal-question-") &&
  q.options.some((o) => o.optionId === "go_on") && q.options.some((o) => o.optionId === "answer_later"),
  "the goal's question is a permission request", q);
check(of(goalId).some((u) => u.sessionUpdate === "tool_call" && u.toolCallId === q.toolCall.toolCallId &&
  JSON.stringify(u.content).includes("Which database")), "the question's card shows it", of(goalId));
await until(() => said(goalId, "agent_thought_chunk").includes("Task succeeded"));
check(said(goalId, "agent_message_chunk").includes("Goal done on my best judgement."), "the goal went on after go on",
  said(goalId, "agent_message_chunk"));
await agent.request("session/close", { sessionId: goalId });
child.stdin.end();
const code = await new Promise((resolve) => child.on("exit", resolve));
check(code === 0, "the agent exits 0 when stdin closes", code);
