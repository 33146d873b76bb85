// Measures the console in headless Chromium against a running daemon, for
// BENCHMARKS.md (tests/benches/console.rs starts the daemon and runs it):
// `node bench.mjs BASE RUNS GRAPH...` where each GRAPH is a graph page's
// query (`kind=configmaps&namespace=ns-00&name=kube-root-ca.crt&depth=1`).
// Prints one JSON line of figures, each the list of its RUNS values.
import { chromium } from "playwright-core";

const [base, runsText, ...graphs] = process.argv.slice(2);
const runs = Number(runsText);
const executablePath = process.env.GRW_CHROMIUM || "/usr/lib/chromium/chromium";
const browser = await chromium.launch({ executablePath, args: ["--no-sandbox"] });

/** A fresh page (nothing cached) that notes when `selector` first shows, in ms from navigation start. */
async function fresh() {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  const bytes = { assets: 0, api: 0 };
  page.on("response", async (r) => {
    const length = Number(r.headers()["content-length"] || 0) || (await r.body().catch(() => Buffer.alloc(0))).length;
    if (new URL(r.url()).pathname.startsWith("/ui/")) bytes.assets += length;
    else bytes.api += length;
  });
  return { context, page, bytes };
}

async function firstSeen(page, check) {
  return page.evaluate(
    (source) =>
      new Promise((resolve) => {
        const test = new Function(`return (${source})();`);
        const tick = () => (test() ? resolve(performance.now()) : requestAnimationFrame(tick));
        tick();
      }),
    check.toString(),
  );
}

const figures = { overviewMs: [], transferredAssets: [], transferredOverviewApi: [], graphs: {}, tableLoadMs: [], tableScrollMs: [], frameP50Ms: [], frameP99Ms: [], frameMaxMs: [], tableRows: [] };

for (let i = 0; i < runs; i++) {
  const { context, page, bytes } = await fresh();
  await page.goto(`${base}/ui/`);
  figures.overviewMs.push(await firstSeen(page, () => document.querySelectorAll("[data-testid=watches] tbody tr").length > 0 && document.querySelector("[data-testid=process] dd")));
  await page.waitForLoadState("networkidle").catch(() => {});
  figures.transferredAssets.push(bytes.assets);
  figures.transferredOverviewApi.push(bytes.api);
  await context.close();
}

for (const graph of graphs) {
  const entry = { ms: [], nodes: 0, edges: 0 };
  for (let i = 0; i < runs; i++) {
    const { context, page } = await fresh();
    await page.goto(`${base}/ui/graph?${graph}`);
    entry.ms.push(await firstSeen(page, () => window.grwGraph && window.grwGraph.nodes().length > 1));
    entry.nodes = await page.evaluate(() => window.grwGraph.nodes().length);
    entry.edges = await page.evaluate(() => window.grwGraph.edges().length);
    await context.close();
  }
  figures.graphs[graph] = entry;
}

for (let i = 0; i < runs; i++) {
  const { context, page } = await fresh();
  await page.goto(`${base}/ui/objects?kind=pods`);
  figures.tableLoadMs.push(await firstSeen(page, () => document.querySelectorAll("[data-testid=objects] tbody tr[data-name]").length > 0));
  // Scrolls to the end a screen a frame, reading more rows as it goes,
  // and notes each frame's time.
  const scrolled = await page.evaluate(
    () =>
      new Promise((resolve) => {
        const box = document.querySelector("[data-testid=objects-scroll]");
        const frames = [];
        const started = performance.now();
        let last = started;
        const step = (now) => {
          frames.push(now - last);
          last = now;
          box.scrollTop += box.clientHeight;
          const rows = document.querySelector("[data-testid=objects-count]").textContent;
          const atEnd = box.scrollTop + box.clientHeight >= box.scrollHeight - 2 && !rows.includes("more as you scroll");
          if (atEnd || now - started > 120000) {
            resolve({ ms: now - started, frames, rows });
          } else requestAnimationFrame(step);
        };
        requestAnimationFrame(step);
      }),
  );
  const frames = scrolled.frames.slice(1).sort((a, b) => a - b);
  const at = (p) => frames[Math.min(frames.length - 1, Math.round((frames.length - 1) * p))];
  figures.tableScrollMs.push(scrolled.ms);
  figures.frameP50Ms.push(at(0.5));
  figures.frameP99Ms.push(at(0.99));
  figures.frameMaxMs.push(frames[frames.length - 1]);
  figures.tableRows.push(await page.locator("[data-testid=objects] tbody tr[data-name]").last().getAttribute("data-name"));
  await context.close();
}

console.log(JSON.stringify(figures));
await browser.close();
