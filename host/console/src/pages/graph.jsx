// The relationship graph around an object: the edges the analyzers found,
// to a chosen depth and direction, drawn by Cytoscape.js (pan, zoom,
// click a node to open it), read again every few seconds so that edges
// that come or go show.
import cytoscape from "cytoscape";
import { useEffect, useRef, useState } from "preact/hooks";
import { parseKey, useApi } from "../api.js";
import { go, href, setParams, Link } from "../url.jsx";
import { Problem } from "../ui.jsx";

const EVERY = 5000;

function styles() {
  const dark = matchMedia("(prefers-color-scheme: dark)").matches;
  const text = dark ? "#e6e6e6" : "#1d1d1f";
  return [
    { selector: "node", style: { label: "data(label)", "font-size": 10, "min-zoomed-font-size": 7, color: text, "text-valign": "bottom", "text-margin-y": 4, "background-color": "data(color)", width: 18, height: 18, "text-wrap": "wrap", "text-max-width": 140 } },
    { selector: "node.root", style: { width: 26, height: 26, "border-width": 3, "border-color": dark ? "#fff" : "#000" } },
    { selector: "node.missing", style: { "background-opacity": 0.15, "border-width": 2, "border-style": "dashed", "border-color": "#d33" } },
    { selector: "edge", style: { width: 1.5, "line-color": dark ? "#777" : "#aaa", "target-arrow-color": dark ? "#777" : "#aaa", "target-arrow-shape": "triangle", "curve-style": "bezier", label: "data(relation)", "font-size": 8, "min-zoomed-font-size": 7, color: dark ? "#aaa" : "#666", "text-rotation": "autorotate" } },
    { selector: "edge.stale", style: { "line-style": "dashed" } },
    { selector: "node:selected", style: { "border-width": 3, "border-color": "#2a7de1" } },
  ];
}

/** Up to this many objects, a layered tree; more, rings around the root. */
const LAYERED_AT_MOST = 60;

/**
 * Lays the graph out from `root`: a layered tree while it is small; rings
 * by distance from the root when it is not, since a layer of hundreds of
 * Pods drawn as one row cannot be read.
 */
function layOut(cy, root) {
  const start = cy.getElementById(root);
  if (cy.nodes().length <= LAYERED_AT_MOST || start.empty()) {
    cy.layout({ name: "breadthfirst", directed: true, roots: start, spacingFactor: 1.1, animate: false, padding: 20 }).run();
    return;
  }
  const distance = new Map();
  cy.elements().bfs({
    roots: start,
    directed: false,
    visit: (node, _edge, _previous, _i, depth) => {
      distance.set(node.id(), depth);
    },
  });
  const farthest = Math.max(0, ...distance.values()) + 1;
  cy.layout({
    name: "concentric",
    concentric: (node) => farthest - (distance.get(node.id()) ?? farthest),
    levelWidth: () => 1,
    minNodeSpacing: 8,
    animate: false,
    padding: 20,
  }).run();
}

const PALETTE = ["#2a7de1", "#e1822a", "#3aa655", "#b44bc9", "#d9453d", "#1fa3a3", "#8c6d46", "#7a7a7a"];
function color(kind) {
  let h = 0;
  for (const c of kind) h = (h * 31 + c.charCodeAt(0)) >>> 0;
  return PALETTE[h % PALETTE.length];
}

function elements(data, analyzers) {
  const hidden = (e) => analyzers.length > 0 && !analyzers.includes(e.analyzer);
  const edges = data.edges.filter((e) => !hidden(e));
  const used = new Set([data.root]);
  for (const e of edges) {
    used.add(e.from);
    used.add(e.to);
  }
  const nodes = data.nodes.filter((n) => used.has(n.id)).map((n) => ({
    group: "nodes",
    data: { id: n.id, label: `${n.kind}\n${n.namespace ? `${n.namespace}/` : ""}${n.name}`, color: color(n.kind) },
    classes: [n.id === data.root ? "root" : "", n.exists === false ? "missing" : ""].join(" "),
  }));
  const seen = new Set();
  const links = [];
  for (const e of edges) {
    const id = `${e.from}|${e.relation}|${e.to}`;
    if (seen.has(id)) continue;
    seen.add(id);
    links.push({ group: "edges", data: { id, source: e.from, target: e.to, relation: e.relation, analyzer: e.analyzer }, classes: e.stale ? "stale" : "" });
  }
  return [...nodes, ...links];
}

export function GraphPage({ params }) {
  const { kind, namespace, name } = params;
  const depth = params.depth || "2";
  const direction = params.direction || "both";
  const analyzers = (params.analyzer || "").split(",").filter(Boolean);
  const q = new URLSearchParams({ depth, direction, limit: "1000" });
  if (params.relation) q.set("relation", params.relation);
  const scope = namespace ? `/api/v1/namespaces/${encodeURIComponent(namespace)}` : "/api/v1";
  const path = kind && name ? `${scope}/relations/${encodeURIComponent(kind)}/${encodeURIComponent(name)}?${q}` : null;
  const { data, error } = useApi(path, { every: EVERY });
  const box = useRef(null);
  const graph = useRef(null);
  const [count, setCount] = useState({ nodes: 0, edges: 0 });

  useEffect(() => {
    const cy = cytoscape({ container: box.current, style: styles(), wheelSensitivity: 0.3, minZoom: 0.05, maxZoom: 4 });
    cy.on("tap", "node", (e) => {
      const key = parseKey(e.target.id());
      go(href("object", { kind: key.ref, namespace: key.namespace, name: key.name }));
    });
    graph.current = cy;
    // For whoever inspects the page (the browser tests read the graph's
    // objects through it).
    window.grwGraph = cy;
    return () => {
      cy.destroy();
      graph.current = null;
      window.grwGraph = undefined;
    };
  }, []);

  useEffect(() => {
    const cy = graph.current;
    if (!cy || !data) return;
    const wanted = elements(data, analyzers);
    const ids = new Set(wanted.map((e) => e.data.id));
    let changed = false;
    cy.batch(() => {
      cy.elements().forEach((el) => {
        if (!ids.has(el.id())) {
          el.remove();
          changed = true;
        }
      });
      for (const el of wanted) {
        const there = cy.getElementById(el.data.id);
        if (there.empty()) {
          cy.add(el);
          changed = true;
        } else {
          there.classes(el.classes);
        }
      }
    });
    if (changed) layOut(cy, data.root);
    setCount({ nodes: cy.nodes().length, edges: cy.edges().length });
  }, [data, params.analyzer]);

  const allAnalyzers = [...new Set((data?.edges || []).map((e) => e.analyzer))].sort();
  const allRelations = [...new Set((data?.edges || []).map((e) => e.relation))].sort();
  return (
    <section class="graph-page">
      <h1>Relationship graph</h1>
      {!path && <p class="muted">Open the graph from an object's page, or give <code>kind</code>, <code>namespace</code> and <code>name</code>.</p>}
      {path && (
        <form class="filters" onSubmit={(e) => e.preventDefault()}>
          <span>
            From <Link to={href("object", { kind, namespace, name })}>{kind} {namespace ? `${namespace}/` : ""}{name}</Link>
          </span>
          <label>
            Depth
            <select value={depth} onChange={(e) => setParams({ depth: e.target.value }, { replace: true })} data-testid="graph-depth">
              {["1", "2", "3", "4", "5"].map((d) => <option key={d}>{d}</option>)}
            </select>
          </label>
          <label>
            Direction
            <select value={direction} onChange={(e) => setParams({ direction: e.target.value }, { replace: true })}>
              <option value="both">both</option>
              <option value="out">out</option>
              <option value="in">in</option>
            </select>
          </label>
          <label>
            Relation
            <select value={params.relation || ""} onChange={(e) => setParams({ relation: e.target.value }, { replace: true })} data-testid="graph-relation">
              <option value="">any</option>
              {[...new Set([...allRelations, params.relation].filter(Boolean))].map((r) => <option key={r}>{r}</option>)}
            </select>
          </label>
          <label>
            Analyzer
            <select value={params.analyzer || ""} onChange={(e) => setParams({ analyzer: e.target.value }, { replace: true })} data-testid="graph-analyzer">
              <option value="">any</option>
              {[...new Set([...allAnalyzers, ...analyzers])].map((a) => <option key={a}>{a}</option>)}
            </select>
          </label>
          <button type="button" onClick={() => graph.current?.fit(undefined, 20)}>Fit</button>
          <span class="muted" data-testid="graph-count">{count.nodes} objects, {count.edges} edges{data?.truncated ? " (cut: more than the limit)" : ""}</span>
        </form>
      )}
      <Problem error={error} what="the relationships" />
      <div ref={box} class="graph" data-testid="graph" role="img" aria-label="Relationship graph; click an object to open it" />
    </section>
  );
}
