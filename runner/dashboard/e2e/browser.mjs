// Drives the dashboard in a real Chromium, as a person would: run by the Go
// test TestBrowser, which starts the service and passes what it needs in
// the environment. Prints one line per step; exits non-zero on the first
// failure. It never downloads a browser: it uses the system's Chromium.
import { chromium } from "playwright-core";
import { createServer } from "node:http";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const env = (k) => {
  const v = process.env[k];
  if (!v) throw new Error(`missing ${k}`);
  return v;
};
const base = env("DASH_URL"), shots = env("DASH_SHOTS"), taskID = env("DASH_TASK");
const approverToken = env("DASH_APPROVER_TOKEN"), requesterLink = env("DASH_REQUESTER_LINK");
const node = env("DASH_NODE"), prTask = env("DASH_PR_TASK"), ctl = env("DASH_CTL"), questionTask = env("DASH_QUESTION_TASK");
const profile = mkdtempSync(join(tmpdir(), "rx-chromium-"));
const problems = [];
// Console errors a step provokes on purpose (a refused request logs one).
const expectedErrors = [];

function step(name) { console.log("step: " + name); }
function check(ok, what) { if (!ok) throw new Error("check failed: " + what); }
async function noOverflow(p, what) {
  check(await p.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth), what + " has no horizontal overflow");
}

// edgeCrossings walks every fleet edge as the browser drew it, a point
// every 2 px, and lists each point strictly inside a node's box (2 px in
// from its border, so an edge may start and end on one): what a person
// would see as a line through a box.
function edgeCrossings() {
  const out = [];
  for (const svg of document.querySelectorAll(".fleet-scroll svg")) {
    const boxes = [...svg.querySelectorAll("g.fn")].map((g) => {
      const r = g.querySelector("rect");
      return { id: g.querySelector("text").textContent, x: r.x.baseVal.value, y: r.y.baseVal.value, w: r.width.baseVal.value, h: r.height.baseVal.value };
    });
    for (const e of svg.querySelectorAll("path.edge")) {
      const n = e.getTotalLength();
      for (let l = 0; l <= n; l += 2) {
        const pt = e.getPointAtLength(l);
        const b = boxes.find((b) => pt.x > b.x + 2 && pt.x < b.x + b.w - 2 && pt.y > b.y + 2 && pt.y < b.y + b.h - 2);
        if (b) { out.push(e.getAttribute("d") + " crosses " + b.id); break; }
      }
    }
  }
  return out;
}

const ctx = await chromium.launchPersistentContext(profile, {
  executablePath: process.env.DASH_CHROMIUM || "/usr/bin/chromium",
  headless: true,
  args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync"],
  viewport: { width: 390, height: 844 }, // a phone: the approver on the go
});
try {
  const page = ctx.pages()[0] || await ctx.newPage();
  page.on("console", (m) => { if (m.type() === "error") problems.push(m.text()); });
  page.on("pageerror", (e) => { problems.push(String(e)); console.log("page error: " + e); });
  page.on("request", (r) => { if (!r.url().startsWith(base)) problems.push("third-party request " + r.url()); });

  step("a link preview fetching the requester's one-time link twice does not use it up");
  for (let i = 0; i < 2; i++) {
    const preview = await fetch(requesterLink, { redirect: "manual", headers: { "User-Agent": "Slackbot-LinkExpanding 1.0" } });
    check(preview.status === 200 && !preview.headers.get("set-cookie")?.includes("rx_session="),
      "a preview's GET shows the page and signs nothing in, got " + preview.status);
  }

  step("the requester opens the link, presses Sign in, and may not approve her own call");
  await page.goto(requesterLink);
  check((await ctx.cookies(base)).every((c) => c.name !== "rx_session"), "opening the link alone signs nothing in");
  await page.screenshot({ path: join(shots, "login-link.png"), fullPage: true });
  await Promise.all([page.waitForURL(base + "/"), page.getByRole("button", { name: "Sign in" }).click()]);
  check(new URL(page.url()).search === "", "the link's code is gone from the URL: " + page.url());
  await page.goto(base + "/tasks/" + taskID);
  check((await page.locator("h1 [data-state]").textContent()) === "waiting_approval", "task waits");
  check(await page.getByText("You cannot decide this: you asked for this task; another approver must decide.").isVisible(),
    "the requester is told, in her own words, that she cannot decide");
  check(await page.locator("button[value=allow_once]").count() === 0, "no Allow button for the requester");
  check(await page.getByRole("button", { name: "Cancel" }).isVisible(), "the requester may cancel her waiting task");
  check(!(await page.getByRole("button", { name: "Resume" }).isVisible()), "no Resume for a task still going");
  check((await page.locator(".prompt-text").textContent()).includes("<script>"), "the hostile prompt shows as text");
  check(await page.locator("#fleet-f1 svg").isVisible(), "the fleet graph is drawn");
  check(await page.locator("#fleet-f1 .f-skipped title").textContent() === "docs: skipped (upstream fix failed)\ndepends on fix",
    "a skipped node says why on hover");
  check(await page.locator("#fleet-f1 path.edge").count() === 6 && await page.locator("#fleet-f1 g.fn").count() === 5,
    "every node and edge is drawn");
  let crossings = await page.evaluate(edgeCrossings);
  check(crossings.length === 0, "no fleet edge crosses a node's box on a phone: " + crossings.join("; "));
  // The check itself sees a crossing: an edge planted straight through
  // the first node's box is caught.
  await page.evaluate(() => {
    const svg = document.querySelector("#fleet-f1 svg");
    const r = svg.querySelector("g.fn rect");
    const x = r.x.baseVal.value, y = r.y.baseVal.value + r.height.baseVal.value / 2;
    const bad = document.createElementNS("http://www.w3.org/2000/svg", "path");
    bad.setAttribute("class", "edge");
    bad.id = "planted-edge";
    bad.setAttribute("d", `M${x - 20} ${y}L${x + r.width.baseVal.value + 20} ${y}`);
    svg.appendChild(bad);
  });
  const caught = (await page.evaluate(edgeCrossings)).length;
  await page.evaluate(() => document.getElementById("planted-edge").remove());
  check(caught === 1, "the crossing check sees an edge drawn through a box, found " + caught);
  const frame = await page.locator("#fleet-f1 .fleet-scroll").evaluate((f) =>
    ({ scrolls: f.scrollWidth > f.clientWidth, overflow: getComputedStyle(f).overflowX }));
  check(frame.scrolls && frame.overflow === "auto", "on a phone the graph scrolls inside its frame: " + JSON.stringify(frame));
  await noOverflow(page, "the requester's task page on a phone");
  await page.locator("#fleet-f1").screenshot({ path: join(shots, "fleet.png") });
  await page.screenshot({ path: join(shots, "task-requester.png"), fullPage: true });
  await page.setViewportSize({ width: 1280, height: 900 });
  crossings = await page.evaluate(edgeCrossings);
  check(crossings.length === 0, "no fleet edge crosses a node's box on a desktop: " + crossings.join("; "));
  await noOverflow(page, "the requester's task page on a desktop");
  await page.locator("#fleet-f1").screenshot({ path: join(shots, "fleet-desktop.png") });
  await page.setViewportSize({ width: 390, height: 844 });

  step("she answers a blocked task's question from its page, and it goes on");
  await page.goto(base + "/tasks/" + questionTask);
  check(await page.locator("header.outcome.o-warn").isVisible(), "a blocked task's header is amber");
  check((await page.locator("header.outcome h1").textContent()).includes("Blocked"), "and says it is blocked");
  check((await page.locator("#question").textContent()).includes("Which branch should the release come from?"), "the question is at the top");
  await noOverflow(page, "the question on a phone");
  await page.screenshot({ path: join(shots, "question.png"), fullPage: true });
  await page.fill("#answer", "the release/2.4 branch");
  await Promise.all([page.waitForURL(base + "/tasks/" + questionTask), page.getByRole("button", { name: "Answer" }).click()]);
  await page.locator("h1 [data-state]", { hasText: "succeeded" }).waitFor({ timeout: 20000 });
  await page.reload();
  check(await page.locator("#question").count() === 0, "the answered question is settled");
  check(await page.getByText("the release/2.4 branch").first().isVisible(), "her answer is on the page");
  check(await page.getByText("releasing from the branch you named").first().isVisible(), "and the task's reply to it");
  await page.setViewportSize({ width: 1280, height: 900 });
  await noOverflow(page, "the answered task on a desktop");
  await page.screenshot({ path: join(shots, "question-answered-desktop.png"), fullPage: true });
  await page.setViewportSize({ width: 390, height: 844 });
  await page.goto(base + "/tasks/" + taskID);
  const oldCSRF = await page.locator(`form[action="/tasks/${taskID}/cancel"] input[name=csrf]`).getAttribute("value");
  const oldSession = (await ctx.cookies(base)).find((c) => c.name === "rx_session");
  check(oldCSRF && oldSession, "the requester's page has a CSRF token and she a session cookie");
  await page.getByRole("button", { name: "Sign out" }).click();
  await page.waitForURL(/\/login$/);

  step("signed out, her old session and CSRF token no longer act");
  // Put the old cookie back, as someone who copied it would, and replay
  // the cancel form: the session is gone on the server, so it is refused.
  await ctx.addCookies([oldSession]);
  const replayed = await page.evaluate(async ([id, csrf]) => {
    const r = await fetch("/tasks/" + id + "/cancel", { method: "POST", redirect: "manual", body: new URLSearchParams({ csrf }) });
    return r.status;
  }, [taskID, oldCSRF]);
  expectedErrors.push("status of 401");
  check(replayed === 401, "the replayed cancel after sign-out is 401, got " + replayed);
  await ctx.clearCookies();
  await page.goto(base + "/approvals");
  check(page.url().startsWith(base + "/login"), "signed out: /approvals sends to sign-in");

  step("the approver (an admin) signs in with his token");
  await page.fill("#token", approverToken);
  await Promise.all([page.waitForURL(base + "/approvals"), page.getByRole("button", { name: "Sign in" }).click()]);
  await page.screenshot({ path: join(shots, "approvals.png"), fullPage: true });
  check((await page.locator("#pending-count").textContent()) === "1" && await page.locator("#pending-count").isVisible(),
    "the navigation counts the one pending approval");
  check((await page.title()).startsWith("(1) Approvals"), "and so does the title: " + await page.title());
  await page.goto(base + "/");
  check(await page.locator(`a[href="/tasks/${taskID}"]`).isVisible(), "the task is listed");
  await page.screenshot({ path: join(shots, "tasks.png"), fullPage: true });

  step("the schedules, webhook deliveries and nodes pages show what the store holds");
  await page.goto(base + "/schedules");
  const nightly = page.locator("tbody tr", { hasText: "nightly" });
  check(await nightly.isVisible(), "the schedule is listed");
  check((await nightly.textContent()).includes("Europe/Berlin"), "with its time zone");
  check(await nightly.getByRole("button", { name: "Run now" }).isVisible() &&
    await nightly.getByRole("button", { name: "Pause" }).isVisible(), "an admin may run and pause it");
  await page.screenshot({ path: join(shots, "schedules.png"), fullPage: true });
  await page.goto(base + "/webhooks");
  check(await page.locator(".d-accepted", { hasText: "accepted" }).isVisible(), "the accepted delivery is shown");
  check(await page.getByText("check_run.completed").isVisible(), "with its event");
  check(await page.locator(".d-rejected", { hasText: "rejected" }).isVisible(), "the rejected delivery is shown");
  check(await page.getByText("bad signature <img src=x>").isVisible(), "with its reason, as text");
  await page.screenshot({ path: join(shots, "webhooks.png"), fullPage: true });
  await page.goto(base + "/nodes");
  const self = page.locator("tbody tr", { hasText: node });
  check(await self.isVisible() && (await self.textContent()).includes("(this one)"), "this node is listed as this one");
  check((await self.locator("td[data-label=Version]").textContent()) === "dev", "with a version, not a blank");
  check((await self.locator("td[data-running]").textContent()).startsWith("0/"), "the waiting task holds no worker on it");
  check((await page.locator("[data-work=waiting_approval]").textContent()) === "1 waiting for approval", "it is counted as waiting instead");
  await page.screenshot({ path: join(shots, "nodes.png"), fullPage: true });

  step("a task waiting for CI shows its pull request and checks, and follows a check live");
  await page.goto(base + "/tasks/" + prTask);
  check((await page.locator("h1 [data-state]").textContent()) === "waiting_ci", "the task waits for CI");
  const pr = page.locator("#pr");
  check(await pr.getByRole("link", { name: "#12" }).getAttribute("href") === "https://forge.test/acme/app/pull/12", "the PR is linked");
  check((await pr.locator(".ci").textContent()).includes("CI waiting · 1/2 passing"), "the CI state counts the passing checks");
  check(await pr.getByRole("link", { name: "build" }).getAttribute("href") === "https://ci.test/build/1", "a check links to its page");
  check((await pr.locator("li.ck-pending").textContent()).includes("pending"), "the pending check says so");
  check(await page.getByRole("button", { name: "Cancel" }).isVisible(), "a task waiting for CI may be cancelled");
  await noOverflow(page, "the PR's checks on a phone");
  await page.screenshot({ path: join(shots, "pr-checks.png"), fullPage: true });
  let prNavigations = 0;
  page.on("framenavigated", (f) => { if (f === page.mainFrame()) prNavigations++; });
  await page.locator("#live:not([hidden])").waitFor({ timeout: 10000 });
  check((await fetch(ctl + "/ci")).ok, "the check's change was recorded");
  await pr.locator("li.ck-failure").waitFor({ timeout: 10000 });
  check((await pr.locator(".ci").textContent()).includes("CI fixing · 1/2 passing"), "the CI state followed live");
  check(prNavigations === 0, "the checks changed without a reload");
  await page.setViewportSize({ width: 1280, height: 900 });
  await noOverflow(page, "the PR's checks on a desktop");
  await page.screenshot({ path: join(shots, "pr-checks-desktop.png"), fullPage: true });
  await page.setViewportSize({ width: 390, height: 844 });

  step("the memory page lists what tasks remember and forgets one");
  await page.goto(base + "/");
  await page.getByRole("link", { name: "Memory" }).click();
  await page.waitForURL(base + "/memories");
  const wsMemory = page.locator("#memory-list tbody tr", { hasText: "CI logs live at" });
  check(await wsMemory.isVisible(), "the workspace memory is listed");
  check((await wsMemory.locator("td[data-label=Scope]").textContent()).includes("workspace:repo"), "with its scope");
  check((await wsMemory.locator("td[data-label='Saved by']").textContent()) === "token:alice", "who saved it");
  check(await wsMemory.locator(`a[href="/tasks/${taskID}"]`).isVisible(), "and the task it came from");
  check(await page.getByText("bob reviews <b>docs</b> changes").isVisible(), "markup in a memory shows as text");
  await noOverflow(page, "the memory page on a phone");
  await page.screenshot({ path: join(shots, "memories.png"), fullPage: true });
  await page.setViewportSize({ width: 1280, height: 900 });
  await noOverflow(page, "the memory page on a desktop");
  await page.screenshot({ path: join(shots, "memories-desktop.png"), fullPage: true });
  await page.setViewportSize({ width: 390, height: 844 });
  await Promise.all([page.waitForNavigation(), wsMemory.getByRole("button", { name: "Forget" }).click()]);
  check(await page.locator("#memory-list tbody tr", { hasText: "CI logs live at" }).count() === 0, "the forgotten memory is gone");
  await page.getByLabel("include forgotten").check();
  await Promise.all([page.waitForNavigation(), page.getByRole("button", { name: "Show" }).click()]);
  check((await page.locator("tr.forgotten").textContent()).includes("forgotten by token:bob"), "include forgotten shows who forgot it");
  await page.goto(base + "/");

  step("he opens the task and clicks Allow once; the page, its state and its actions follow the task live");
  await page.click(`a[href="/tasks/${taskID}"]`);
  await page.waitForURL(base + "/tasks/" + taskID);
  check((await page.locator("h1 [data-state]").textContent()) === "waiting_approval", "the replayed cancel changed nothing");

  step("a page on another origin posting his valid CSRF token with his cookies is refused");
  const csrf = await page.locator(`form[action="/tasks/${taskID}/cancel"] input[name=csrf]`).getAttribute("value");
  const evil = createServer((req, res) => {
    res.setHeader("Content-Type", "text/html");
    res.end(`<!doctype html><script>
      fetch(${JSON.stringify(base + "/tasks/" + taskID + "/cancel")}, { method: "POST", mode: "no-cors",
        credentials: "include", body: new URLSearchParams({ csrf: ${JSON.stringify(csrf)} }) });
    </script>`);
  });
  await new Promise((ok) => evil.listen(0, "127.0.0.1", ok));
  try {
    const other = await ctx.newPage();
    const answered = other.waitForResponse((r) => r.url().endsWith("/cancel"));
    await other.goto(`http://127.0.0.1:${evil.address().port}/`);
    const res = await answered;
    // 403, not 401: his cookie went along (SameSite=Strict lets it, the
    // two loopback origins being one site) and the origin check refused it.
    check(res.status() === 403, "the cross-origin post is 403, got " + res.status());
    await other.close();
  } finally {
    evil.close();
  }
  await page.reload();
  check((await page.locator("h1 [data-state]").textContent()) === "waiting_approval", "the cross-origin post changed nothing");
  // The task list, open in another tab, must follow the task on its own.
  const list = await ctx.newPage();
  list.on("pageerror", (e) => problems.push(String(e)));
  await list.goto(base + "/");
  const row = list.locator(`tr:has(a[href="/tasks/${taskID}"]) td[data-label=State]`);
  check((await row.textContent()).includes("waiting_approval"), "the list shows the task waiting");
  let listNavigations = 0;
  list.on("framenavigated", (f) => { if (f === list.mainFrame()) listNavigations++; });
  // The approvals page, open in a third tab, must drop the decided request
  // and its count (navigation and title) on its own.
  const aps = await ctx.newPage();
  aps.on("pageerror", (e) => problems.push(String(e)));
  await aps.goto(base + "/approvals");
  check((await aps.locator("#pending-count").textContent()) === "1" && (await aps.title()).startsWith("(1) "), "the approvals tab counts 1");
  let apsNavigations = 0;
  aps.on("framenavigated", (f) => { if (f === aps.mainFrame()) apsNavigations++; });
  await Promise.all([page.waitForNavigation(), page.getByRole("button", { name: "Allow once" }).click()]);
  const after = await page.locator("h1 [data-state]").textContent();
  let navigations = 0;
  page.on("framenavigated", (f) => { if (f === page.mainFrame()) navigations++; });
  console.log("state right after the decision: " + after);
  check(after !== "succeeded", "the task is still going when the page comes back (else nothing is live to see)");
  check(await page.getByRole("button", { name: "Cancel" }).isVisible(), "an admin may cancel the running task");
  await page.locator("h1 [data-state]", { hasText: "succeeded" }).waitFor({ timeout: 20000 });
  check(navigations === 0, "the state changed without a reload");
  check(!(await page.getByRole("button", { name: "Cancel" }).isVisible()) &&
    await page.getByRole("button", { name: "Resume" }).isVisible(), "Cancel gave way to Resume as the task ended, live");
  check(await page.getByText("allowed once by token:bob").first().isVisible(), "the decision is shown");
  await page.locator("header.outcome.o-ok").waitFor({ timeout: 10000 });
  check((await page.locator("header.outcome h1").textContent()).includes("Succeeded"), "the header tells the outcome");
  const durations = await page.locator("[data-durations]").textContent();
  check(durations.includes("ran ") && durations.includes("for approval"), "the time is split into running and waiting: " + durations);
  check(await page.locator("#story li.call", { hasText: "ran echo" }).first().isVisible(), "the call reads in plain words");
  check(await page.locator("#events").count() === 0, "the raw log is not on the story");
  await noOverflow(page, "the story on a phone");
  await page.screenshot({ path: join(shots, "task-done.png"), fullPage: true });
  await list.locator(`tr:has(a[href="/tasks/${taskID}"]) td[data-label=State]`, { hasText: "succeeded" }).waitFor({ timeout: 10000 });
  check(listNavigations === 0, "the task list followed the task without a reload");
  check((await list.title()) === "Tasks · Reasonix", "the task list's title dropped the count: " + await list.title());
  await list.close();
  await aps.getByText("Nothing is waiting for a decision.").waitFor({ timeout: 10000 });
  await aps.locator("#pending-count").waitFor({ state: "hidden", timeout: 10000 });
  check((await aps.title()) === "Approvals · Reasonix", "the approvals tab's title dropped the count: " + await aps.title());
  check(apsNavigations === 0, "the approvals page followed the decision without a reload");
  await aps.close();

  step("markup in the command's output and in the answer shows as text and runs nothing");
  check(await page.getByText('done <script>window.__pwned=3</script><img src=x onerror="window.__pwned=4">').first().isVisible(),
    "the answer, streamed in live, shows its markup as text");
  await page.reload();
  check(await page.getByText('done <script>window.__pwned=3</script><img src=x onerror="window.__pwned=4">').first().isVisible(),
    "and so does the rendered page");
  const outputs = await page.locator("#story pre").allTextContents();
  check(outputs.some((o) => o.includes("<script>window.__pwned=1</script><img src=x onerror=window.__pwned=2>")),
    "the command's output is shown as text: " + JSON.stringify(outputs));
  check(await page.locator("#story script, #story img, #head script, #head img").count() === 0, "no element came out of the output");
  check(await page.evaluate(() => window.__pwned) === undefined, "no payload ran");

  step("the diff and raw events tabs, and the story on a desktop");
  await page.getByRole("link", { name: /^Diff/ }).click();
  await page.getByRole("heading", { name: "Files changed" }).waitFor();
  await noOverflow(page, "the diff tab on a phone");
  await page.getByRole("link", { name: /^Raw events/ }).click();
  await page.locator("#events li.ev").first().waitFor();
  check(await page.getByText("state → succeeded").isVisible(), "the raw log has the state changes");
  await page.getByRole("link", { name: "Story" }).click();
  await page.setViewportSize({ width: 1280, height: 900 });
  await noOverflow(page, "the story on a desktop");
  await page.screenshot({ path: join(shots, "task-desktop.png"), fullPage: true });
  await page.setViewportSize({ width: 390, height: 844 });

  step("a post without the CSRF token is refused, and changes nothing");
  const forged = await page.evaluate(async (id) => {
    const r = await fetch("/tasks/" + id + "/cancel", { method: "POST", body: new URLSearchParams({ x: "1" }) });
    return r.status;
  }, taskID);
  expectedErrors.push("status of 403");
  check(forged === 403, "a CSRF-less POST from the page's own origin is 403, got " + forged);
  await page.reload();
  check((await page.locator("h1 [data-state]").textContent()) === "succeeded", "the task is unchanged");

  step("light and dark");
  await page.emulateMedia({ colorScheme: "dark" });
  await page.screenshot({ path: join(shots, "task-dark.png"), fullPage: true });

  // The refused requests' errors are the only ones the console may show.
  for (const want of expectedErrors) {
    const i = problems.findIndex((p) => p.includes(want));
    if (i >= 0) problems.splice(i, 1);
  }
  check(problems.length === 0, "no console errors, CSP reports or third-party requests: " + problems.join("; "));
  console.log("ok");
} catch (e) {
  const p = ctx.pages()[0];
  if (p) {
    console.log("failed at " + p.url());
    await p.screenshot({ path: join(shots, "failure.png"), fullPage: true }).catch(() => {});
  }
  throw e;
} finally {
  await ctx.close();
  rmSync(profile, { recursive: true, force: true });
}
