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
const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
const page = await context.newPage();
const errors = [];
page.on("console", (m) => m.type() === "error" && errors.push(`console: ${m.text()}`));
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

const scenarios = {
  async replay() {
    await visit("/ui/", "overview", "[data-testid=watches] tbody tr");
    facts.overviewKinds = await page.locator("[data-testid=watches] tbody tr").evaluateAll((rows) => rows.map((r) => r.dataset.kind));
    facts.problems = await page.locator("[data-testid=problems]").innerText();

    await visit("/ui/objects?kind=pods&namespace=shop", "objects", "[data-testid=objects] tbody tr");
    facts.podRows = await page.locator("[data-testid=objects] tbody tr").count();
    facts.podColumns = await page.locator("[data-testid=objects] thead th").allInnerTexts();

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
  },

  async live() {
    await visit("/ui/objects?kind=configmaps&namespace=shop", "live-table-before", "[data-testid=objects] tbody tr");
    facts.rowsBefore = await page.locator("[data-testid=objects] tbody tr").evaluateAll((rows) => rows.map((r) => r.dataset.name));
    await wait("a ConfigMap created");
    await page.locator("[data-testid=objects] tbody tr[data-name=added-live]").waitFor({ timeout: 20000 });
    facts.rowsAfter = await page.locator("[data-testid=objects] tbody tr").evaluateAll((rows) => rows.map((r) => r.dataset.name));
    await page.screenshot({ path: `${shots}/live-table-after.png` });

    await visit("/ui/graph?kind=deployments&namespace=shop&name=web&depth=1", "live-graph-before", "[data-testid=graph]");
    await graphNodes();
    const missing = () => page.evaluate(() => window.grwGraph.nodes(".missing").map((n) => n.id()));
    facts.missingBefore = await missing();
    await wait("the ConfigMap it mounts created");
    await page.waitForFunction(() => window.grwGraph.nodes(".missing").length === 0, null, { timeout: 20000 });
    facts.missingAfter = await missing();
    facts.nodesAfter = await graphNodes();
    await page.screenshot({ path: `${shots}/live-graph-after.png` });
  },
};

try {
  await scenarios[scenario]();
} catch (e) {
  errors.push(`scenario ${scenario}: ${e.message}`);
  await page.screenshot({ path: `${shots}/failed.png` }).catch(() => {});
}
console.log(JSON.stringify({ facts, errors }));
await browser.close();
process.exit(0);
