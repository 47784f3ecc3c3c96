// Measures how soon an open task page shows a state change; run by
// BenchmarkStateChangeVisible, which talks to it by lines. For each
// "open <task>" on stdin it loads the task page, waits until the page's
// live stream is connected, arms an observer on the state badge and prints
// "ready"; the Go side then changes the task's state and reads
// "seen <ms> <state>": the wall-clock time (ms since the epoch) of the
// first animation frame after the badge changed, i.e. when it can be
// painted, and the state it shows.
import { chromium } from "playwright-core";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";

const env = (k) => {
  const v = process.env[k];
  if (!v) throw new Error(`missing ${k}`);
  return v;
};
const base = env("DASH_URL"), token = env("DASH_TOKEN");
const profile = mkdtempSync(join(tmpdir(), "rx-chromium-"));
const ctx = await chromium.launchPersistentContext(profile, {
  executablePath: process.env.DASH_CHROMIUM || "/usr/bin/chromium",
  headless: true,
  args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync"],
});
try {
  const page = ctx.pages()[0] || await ctx.newPage();
  await page.goto(base + "/login");
  await page.fill("#token", token);
  await Promise.all([page.waitForURL((u) => !u.pathname.startsWith("/login")),
    page.getByRole("button", { name: "Sign in" }).click()]);
  for await (const line of createInterface({ input: process.stdin })) {
    const [cmd, id] = line.split(" ");
    if (cmd !== "open" || !id) throw new Error("unknown command " + line);
    await page.goto(base + "/tasks/" + id);
    await page.locator("#live").waitFor({ state: "visible" }); // the stream is open
    await page.evaluate(() => {
      const badge = document.querySelector("h1 [data-state]");
      const before = badge.textContent;
      new MutationObserver((_, obs) => {
        if (badge.textContent === before) return;
        obs.disconnect();
        const now = badge.textContent;
        requestAnimationFrame(() => { window.__seen = [performance.timeOrigin + performance.now(), now]; });
      }).observe(badge, { childList: true, characterData: true, subtree: true });
    });
    console.log("ready");
    const [at, state] = await (await page.waitForFunction(() => window.__seen, null, { timeout: 10000 })).jsonValue();
    console.log("seen " + at + " " + state);
  }
} finally {
  await ctx.close();
  rmSync(profile, { recursive: true, force: true });
}
