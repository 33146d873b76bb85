// Drives the console in a real headless Chromium for the daemon's tests
// (tests/tests/console.rs): `node browser.mjs BASE SCENARIO SHOTS`.
//
// Each scenario visits pages, writes a screenshot of each into SHOTS, and
// prints one JSON line of what it saw (`{"facts": {...}, "errors": [...]}`);
// the Rust test asserts on it. `errors` holds every JavaScript error, every
// console error and every request that left the daemon. When a scenario
// needs the test to change something, it prints `WAIT <what>` and reads a
// line from stdin before it goes on.
import { chromium } from "playwright-core";
import { createInterface } from "node:readline";

const [base, scenario, shots] = process.argv.slice(2);
const executablePath = process.env.GRW_CHROMIUM || "/usr/lib/chromium/chromium";
const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();

async function wait(what) {
  console.log(`WAIT ${what}`);
  await lines.next();
}

const browser = await chromium.launch({ executablePath, args: ["--no-sandbox"] });
// The TLS listener's certificate is the test's own, signed by no
// authority the browser knows.
const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, ignoreHTTPSErrors: base.startsWith("https:") });
const page = await context.newPage();
const errors = [];
// The browser logs each answer that refuses (401, 403) as an error; those
// are what a caller without rights expects, kept apart.
const refusals = [];
page.on("console", (m) => {
  if (m.type() !== "error") return;
  if (/Failed to load resource: the server responded with a status of 40[13]/.test(m.text())) refusals.push(m.location().url);
  else errors.push(`console: ${m.text()}`);
});
page.on("dialog", (d) => {
  facts.dialogs = [...(facts.dialogs || []), d.message()];
  d.accept();
});
page.on("pageerror", (e) => errors.push(`page: ${e.message}`));
page.on("request", (r) => {
  if (!r.url().startsWith(base) && !r.url().startsWith("data:")) errors.push(`request outside the daemon: ${r.url()}`);
});
const facts = {};

async function visit(path, shot, ready) {
  await page.goto(base + path);
  if (ready) await page.locator(ready).first().waitFor({ timeout: 20000 });
  await page.screenshot({ path: `${shots}/${shot}.png`, fullPage: false });
}

/** The ids of the graph's nodes, once it has some. */
async function graphNodes() {
  await page.waitForFunction(() => window.grwGraph && window.grwGraph.nodes().length > 0, null, { timeout: 20000 });
  return page.evaluate(() => window.grwGraph.nodes().map((n) => n.id()).sort());
}

/**
 * Presses Tab until the focused control's text is `text` (at most 40
 * times): how many presses it took, and the focus outline's style then.
 */
async function tabTo(text) {
  for (let presses = 1; presses <= 40; presses++) {
    await page.keyboard.press("Tab");
    const focused = await page.evaluate(() => {
      const e = document.activeElement;
      return e ? { text: e.innerText?.trim(), outline: getComputedStyle(e).outlineStyle } : null;
    });
    if (focused?.text === text) return { presses, outline: focused.outline };
  }
  return null;
}

const scenarios = {
  async replay() {
    await visit("/ui/", "overview", "[data-testid=watches] tbody tr");
    facts.overviewKinds = await page.locator("[data-testid=watches] tbody tr").evaluateAll((rows) => rows.map((r) => r.dataset.kind));
    await page.locator("[data-testid=problems] :is(.ok, .problems)").first().waitFor({ timeout: 20000 });
    facts.problems = await page.locator("[data-testid=problems]").innerText();

    await visit("/ui/objects?kind=pods&namespace=shop", "objects", "[data-testid=objects] tbody tr[data-name]");
    facts.podRows = await page.locator("[data-testid=objects] tbody tr[data-name]").count();
    facts.podColumns = await page.locator("[data-testid=objects] thead th").allInnerTexts();
    // Every kind served is offered, with its short names; a short name typed works.
    await page.waitForFunction(() => document.querySelectorAll("[data-testid=kind-options] option").length > 10, null, { timeout: 20000 });
    facts.kindOptions = await page.locator("[data-testid=kind-options] option").evaluateAll((o) => o.map((e) => `${e.value} = ${e.label}`));
    await page.fill("[data-testid=kind-input]", "deploy");
    await page.keyboard.press("Enter");
    await page.locator("[data-testid=objects] tbody tr[data-name=frontend]").waitFor({ timeout: 20000 });
    facts.deployUrl = page.url();
    facts.deployRows = await page.locator("[data-testid=objects] tbody tr[data-name]").count();

    await visit("/ui/open?kind=deployments&namespace=shop&name=frontend", "object-yaml", "[data-testid=source]");
    facts.yaml = (await page.locator("[data-testid=source]").innerText()).split("\n").slice(0, 3);

    await visit("/ui/object?kind=deployments&namespace=shop&name=frontend&tab=relations", "object-relations", "[data-testid=relations] tbody tr");
    facts.relations = await page.locator("[data-testid=relations] tbody tr").count();

    await visit("/ui/object?kind=deployments&namespace=shop&name=frontend&tab=timeline&depth=2&since=7d", "object-timeline", "[data-testid=timeline-entry]");
    facts.timelineEntries = await page.locator("[data-testid=timeline-entry]").count();
    facts.timelineText = (await page.locator("[data-testid=timeline]").innerText()).slice(0, 4000);

    await visit("/ui/graph?kind=deployments&namespace=shop&name=frontend&depth=2", "graph", "[data-testid=graph]");
    facts.graphNodes = await graphNodes();
    await page.selectOption("[data-testid=graph-relation]", "owns");
    await page.waitForFunction((before) => window.grwGraph.nodes().length !== before, facts.graphNodes.length, { timeout: 20000 });
    facts.ownsNodes = await graphNodes();
    facts.ownsUrl = page.url();
    await page.screenshot({ path: `${shots}/graph-owns.png` });

    await visit("/ui/plugins", "plugins", "[data-testid=plugins] tbody tr");
    facts.plugins = await page.locator("[data-testid=plugins] tbody tr").evaluateAll((rows) => rows.map((r) => r.dataset.name));
    await visit("/ui/subscriptions", "subscriptions", "main h1");
    await visit("/ui/events?kind=pods", "events", "[data-testid=rate]");

    // The theme follows the system's setting.
    const background = () => page.evaluate(() => getComputedStyle(document.body).backgroundColor);
    await page.emulateMedia({ colorScheme: "light" });
    await visit("/ui/", "overview-light", "[data-testid=watches] tbody tr");
    facts.lightBackground = await background();
    await page.emulateMedia({ colorScheme: "dark" });
    await visit("/ui/", "overview-dark", "[data-testid=watches] tbody tr");
    facts.darkBackground = await background();
    facts.loadingLeft = await page.getByText("Loading the console").count();

    // With the keyboard only: Tab to the navigation's Objects, Enter; Tab
    // to an object's Timeline tab, Enter. Each focused control is outlined.
    await visit("/ui/", "keyboard-start", "[data-testid=watches] tbody tr");
    facts.keyboardObjects = await tabTo("Objects");
    await page.keyboard.press("Enter");
    await page.waitForURL(/\/ui\/objects/, { timeout: 20000 });
    facts.keyboardObjectsUrl = new URL(page.url()).pathname;
    await visit("/ui/object?kind=deployments&namespace=shop&name=frontend", "keyboard-object", "[data-testid=source]");
    facts.keyboardTimeline = await tabTo("Timeline");
    await page.keyboard.press("Enter");
    await page.locator("[data-testid=timeline-entry]").first().waitFor({ timeout: 20000 });
    facts.keyboardTimelineUrl = new URL(page.url()).search;
    await page.screenshot({ path: `${shots}/keyboard-timeline.png` });
  },

  async live() {
    await visit("/ui/objects?kind=configmaps&namespace=shop", "live-table-before", "[data-testid=objects] tbody tr[data-name]");
    facts.rowsBefore = await page.locator("[data-testid=objects] tbody tr[data-name]").evaluateAll((rows) => rows.map((r) => r.dataset.name));
    await wait("a ConfigMap created");
    await page.locator("[data-testid=objects] tbody tr[data-name=added-live]").waitFor({ timeout: 20000 });
    facts.rowsAfter = await page.locator("[data-testid=objects] tbody tr[data-name]").evaluateAll((rows) => rows.map((r) => r.dataset.name));
    await page.screenshot({ path: `${shots}/live-table-after.png` });

    await visit("/ui/open?kind=configmaps&namespace=shop&name=first&tab=events", "object-events", "[data-testid=events] tbody tr");
    facts.events = await page.locator("[data-testid=events] tbody tr").evaluateAll((rows) =>
      rows.map((r) => [...r.cells].filter((_, i) => i !== 2).map((c) => c.innerText.trim()).join("\t")));

    await visit("/ui/graph?kind=deployments&namespace=shop&name=web&depth=1", "live-graph-before", "[data-testid=graph]");
    await graphNodes();
    const missing = () => page.evaluate(() => window.grwGraph.nodes(".missing").map((n) => n.id()));
    facts.missingBefore = await missing();
    await wait("the ConfigMap it mounts created");
    await page.waitForFunction(() => window.grwGraph.nodes(".missing").length === 0, null, { timeout: 20000 });
    facts.missingAfter = await missing();
    facts.nodesAfter = await graphNodes();
    await page.screenshot({ path: `${shots}/live-graph-after.png` });

    // A long table: read 500 rows at a time as it scrolls, drawn only in sight.
    await visit("/ui/objects?kind=configmaps&namespace=bulk", "long-table", "[data-testid=objects] tbody tr[data-name]");
    const count = () => page.locator("[data-testid=objects-count]").innerText();
    facts.longFirst = await count();
    facts.longDrawn = await page.locator("[data-testid=objects] tbody tr[data-name]").count();
    for (let i = 0; i < 200 && (await count()).includes("more as you scroll"); i++) {
      await page.locator("[data-testid=objects-scroll]").evaluate((box) => { box.scrollTop = box.scrollHeight; });
      await page.waitForTimeout(100);
    }
    await page.locator("[data-testid=objects-scroll]").evaluate((box) => { box.scrollTop = box.scrollHeight; });
    await page.waitForTimeout(300);
    facts.longLast = await count();
    facts.longLastRow = await page.locator("[data-testid=objects] tbody tr[data-name]").last().getAttribute("data-name");
    await page.screenshot({ path: `${shots}/long-table-end.png` });
  },

  async delegated() {
    await page.goto(`${base}/ui/`);
    await page.click("[data-testid=token-button]");
    await page.fill("[data-testid=token-input]", process.env.GRW_TOKEN);
    await page.keyboard.press("Enter");
    // The overview drawn before the token was given says 401; wait for the
    // one drawn with it.
    await page.locator("[data-testid=problem]", { hasText: "403 Forbidden" }).first().waitFor({ timeout: 20000 });
    await page.screenshot({ path: `${shots}/overview-refused.png` });
    facts.overview = await page.locator("main").innerText();
    facts.tokenKept = await page.evaluate(() => sessionStorage.getItem("grw.token") !== null);

    await visit("/ui/objects?kind=configmaps&namespace=shop", "objects-allowed", "[data-testid=objects] tbody tr[data-name]");
    facts.allowedRows = await page.locator("[data-testid=objects] tbody tr[data-name]").evaluateAll((rows) => rows.map((r) => r.dataset.name));
    await visit("/ui/objects?kind=configmaps", "objects-refused", "[data-testid=problem]");
    facts.refusedAll = await page.locator("[data-testid=problem]").first().innerText();
    await visit("/ui/objects?kind=configmaps&namespace=other", "objects-refused-namespace", "[data-testid=problem]");
    facts.refusedOther = await page.locator("[data-testid=problem]").first().innerText();
    await visit("/ui/open?kind=configmaps&namespace=shop&name=app", "object-allowed", "[data-testid=source]");
    facts.yaml = (await page.locator("[data-testid=source]").innerText()).includes("name: app");
  },

  async deliveries() {
    await visit(`/ui/subscriptions?name=${process.env.GRW_SUBSCRIPTION}`, "subscriptions", "[data-testid=dead-letters] tbody tr");
    facts.subscriptionRow = await page.locator("[data-testid=subscriptions] tbody tr").first().innerText();
    facts.letters = await page.locator("[data-testid=dead-letters] tbody tr[data-seq]").count();
    await page.click("[data-testid=open-letter]");
    facts.body = await page.locator("[data-testid=letter-body]").innerText();
    await page.screenshot({ path: `${shots}/dead-letter-open.png` });
    await wait("the receiver accepts");
    await page.click("[data-testid=replay-letter]");
    await page.locator("[data-testid=action-result]").waitFor({ timeout: 20000 });
    facts.result = await page.locator("[data-testid=action-result]").innerText();
    await page.waitForFunction(() => document.querySelectorAll("[data-testid=dead-letters] tbody tr[data-seq]").length === 0, null, { timeout: 20000 });
    await page.screenshot({ path: `${shots}/dead-letter-replayed.png` });
  },
};

try {
  await scenarios[scenario]();
} catch (e) {
  errors.push(`scenario ${scenario}: ${e.message}`);
  await page.screenshot({ path: `${shots}/failed.png` }).catch(() => {});
}
console.log(JSON.stringify({ facts, errors, refusals }));
await browser.close();
process.exit(0);
