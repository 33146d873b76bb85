// One object: its YAML or JSON, its relationships, its Events and its
// timeline. Reached from any table, graph node or `/ui/open?kind=&namespace=&name=`.
import { dump } from "js-yaml";
import { objectPath, parseKey, useApi } from "../api.js";
import { Link, href, setParams } from "../url.jsx";
import { Badge, Loading, ObjectLink, Problem, ago } from "../ui.jsx";

const TABS = [
  ["yaml", "YAML"],
  ["json", "JSON"],
  ["relations", "Relationships"],
  ["events", "Events"],
  ["timeline", "Timeline"],
];

function scoped(namespace, path) {
  return namespace ? `/api/v1/namespaces/${encodeURIComponent(namespace)}/${path}` : `/api/v1/${path}`;
}

function Source({ object, as }) {
  const text = as === "json" ? JSON.stringify(object, null, 2) : dump(object, { noRefs: true, lineWidth: -1 });
  return <pre class="source" data-testid="source">{text}</pre>;
}

function Relations({ kind, namespace, name }) {
  const path = `${scoped(namespace, `relations/${encodeURIComponent(kind)}/${encodeURIComponent(name)}`)}?depth=1`;
  const { data, error, loading } = useApi(path, { every: 10000 });
  const root = data?.root;
  return (
    <div data-testid="relations">
      <Problem error={error} what="the relationships" />
      <Loading when={loading && !data} />
      {data && data.edges.length === 0 && <p class="muted">No relationship found by the analyzers.</p>}
      {data && data.edges.length > 0 && (
        <table class="grid">
          <thead><tr><th>Direction</th><th>Relation</th><th>Object</th><th>Analyzer</th><th>Details</th></tr></thead>
          <tbody>
            {data.edges.map((e) => {
              const out = e.from === root;
              const other = parseKey(out ? e.to : e.from);
              const missing = (data.nodes || []).find((n) => n.id === (out ? e.to : e.from))?.exists === false;
              return (
                <tr key={`${e.from} ${e.relation} ${e.to} ${e.analyzer}`}>
                  <td>{out ? "→ to" : "← from"}</td>
                  <td>{e.relation}{e.stale && <Badge tone="warn">stale</Badge>}</td>
                  <td>
                    {other.kind} <ObjectLink kind={other.ref} namespace={other.namespace} name={other.name} />
                    {missing && <Badge tone="bad">missing</Badge>}
                  </td>
                  <td>{e.analyzer}</td>
                  <td class="muted">{Object.entries(e.attributes || {}).map(([k, v]) => `${k}=${v}`).join(", ")}</td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
      <p><Link to={href("graph", { kind, namespace, name })}>Open the graph</Link></p>
    </div>
  );
}

/**
 * Where an object's Events are read: `events.k8s.io/v1` when GRW watches
 * it, else core `v1` (the same Events, in the older shape; a watch of it
 * starts on demand). Both hold the same objects, so only one is read.
 */
function eventSource(kinds, objectKind, name) {
  const watched = (kinds?.items || []).some((k) => k.gvk === "events.k8s.io/v1/Event");
  return watched
    ? { kind: "Event.events.k8s.io", selector: `regarding.name=${name},regarding.kind=${objectKind}` }
    : { kind: "events", selector: `involvedObject.name=${name},involvedObject.kind=${objectKind}` };
}

/** An Event of either API as one row: when, from whom, what, how often. */
function eventRow(e) {
  const v1 = e.apiVersion === "v1";
  return {
    uid: e.metadata.uid,
    type: e.type,
    reason: e.reason,
    time: (v1 ? e.lastTimestamp : e.series?.lastObservedTime || e.deprecatedLastTimestamp) || e.eventTime || e.metadata.creationTimestamp,
    from: (v1 ? e.source?.component || e.reportingComponent : e.reportingController || e.deprecatedSource?.component) || "",
    message: v1 ? e.message : e.note,
    count: (v1 ? e.count : e.series?.count || e.deprecatedCount) || 1,
  };
}

function Events({ namespace, name, objectKind }) {
  // Who may not list the watches reads core v1 Events.
  const kinds = useApi("/api/v1/kinds", { every: 30000 });
  const source = kinds.data || kinds.error ? eventSource(kinds.data, objectKind, name) : null;
  const { data, error } = useApi(source && `${objectPath(source.kind, namespace)}?fieldSelector=${encodeURIComponent(source.selector)}`, { every: 10000 });
  const items = (data?.items || []).map(eventRow).sort((a, b) => (b.time || "").localeCompare(a.time || ""));
  return (
    <div data-testid="events">
      <Problem error={error} what="its Events" />
      {data && items.length === 0 && <p class="muted">No Event about it in the cache. Its timeline keeps Events for as long as the journal keeps changes.</p>}
      {items.length > 0 && (
        <table class="grid">
          <thead><tr><th>Type</th><th>Reason</th><th>Age</th><th>From</th><th>Message</th></tr></thead>
          <tbody>
            {items.map((e) => (
              <tr key={e.uid} data-reason={e.reason}>
                <td><Badge tone={e.type === "Warning" ? "bad" : ""}>{e.type}</Badge></td>
                <td>{e.reason}</td>
                <td>{ago(e.time)}</td>
                <td>{e.from}</td>
                <td>{e.message}{e.count > 1 ? ` (×${e.count})` : ""}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}

/** `~ /path: old → new` as [sign, path, old, new]. */
function splitLine(line) {
  const sign = line[0];
  const rest = line.slice(2);
  const colon = rest.indexOf(": ");
  if (colon < 0) return [sign, rest, "", ""];
  const path = rest.slice(0, colon);
  const value = rest.slice(colon + 2);
  if (sign === "~") {
    const arrow = value.indexOf(" → ");
    return arrow < 0 ? [sign, path, "", value] : [sign, path, value.slice(0, arrow), value.slice(arrow + 3)];
  }
  return sign === "-" ? [sign, path, value, ""] : [sign, path, "", value];
}

function Diff({ lines, side }) {
  if (!lines?.length) return null;
  if (!side) {
    return (
      <pre class="diff">
        {lines.map((l) => <div key={l} class={`line ${{ "+": "add", "-": "remove", "~": "change" }[l[0]] || ""}`}>{l}</div>)}
      </pre>
    );
  }
  return (
    <table class="grid diff-side">
      <thead><tr><th>Path</th><th>Before</th><th>After</th></tr></thead>
      <tbody>
        {lines.map((l) => {
          const [sign, path, before, after] = splitLine(l);
          return (
            <tr key={l}>
              <td><code>{path}</code></td>
              <td class={sign === "+" ? "" : "remove"}>{before}</td>
              <td class={sign === "-" ? "" : "add"}>{after}</td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}

function pathText(path) {
  return path.map((step) => `${step.direction === "out" ? "→" : "←"} ${step.relation} ${step.object}`).join(" ");
}

const TONES = { ADDED: "good", DELETED: "bad", EDGE_ADDED: "good", EDGE_REMOVED: "bad", GAP: "warn" };

/** One entry of a timeline: a version (with its diff), an Event, or an edge that came or went. */
function Entry({ item, side }) {
  const badge = <Badge tone={TONES[item.type] || ""}>{item.type.replace("_", " ").toLowerCase()}</Badge>;
  if (item.edge) {
    const [from, to] = [parseKey(item.edge.from), parseKey(item.edge.to)];
    return (
      <div>
        {badge} {from.kind} <ObjectLink kind={from.ref} namespace={from.namespace} name={from.name} /> {item.edge.relation} {to.kind}{" "}
        <ObjectLink kind={to.ref} namespace={to.namespace} name={to.name} /> <span class="muted">({item.edge.analyzer})</span>
      </div>
    );
  }
  const ref = item.group ? `${item.kind}.${item.group}` : item.kind;
  const event = item.event;
  return (
    <>
      <div>
        {badge} {item.kind} <ObjectLink kind={ref} namespace={item.namespace} name={item.name} />
        {item.who && (
          <span class="who">
            {" "}by <strong>{item.who.manager}</strong> ({item.who.operation}{item.who.subresource ? ` ${item.who.subresource}` : ""}){item.who.guessed ? ", likely" : ""}
          </span>
        )}
        {item.origin && item.origin !== "watch" && <span class="muted"> · {item.origin}</span>}
      </div>
      {item.path?.length > 0 && <div class="path muted">{pathText(item.path)}</div>}
      {event && (
        <div class={event.type === "Warning" ? "error-text" : ""}>
          {event.type} {event.reason}: {event.note}{event.count > 1 ? ` (×${event.count})` : ""}{event.reportedBy ? ` · ${event.reportedBy}` : ""}
        </div>
      )}
      {item.gap && <div class="muted">GRW was not watching from {item.gap.from} to {item.gap.until}</div>}
      <Diff lines={item.diffText} side={side} />
    </>
  );
}

const RANGES = ["10m", "1h", "6h", "24h", "7d"];

export function Timeline({ kind, namespace, name, params }) {
  const since = params.since || "1h";
  const depth = params.depth || "1";
  const side = params.diff === "side";
  const q = new URLSearchParams({ since, depth, limit: "200" });
  if (params.relation) q.set("relation", params.relation);
  const path = `${scoped(namespace, `timeline/${encodeURIComponent(kind)}/${encodeURIComponent(name)}`)}?${q}`;
  const { data, error, loading } = useApi(path, { every: 10000 });
  return (
    <div data-testid="timeline">
      <form class="filters" onSubmit={(e) => e.preventDefault()}>
        <label>
          Since
          <select value={RANGES.includes(since) ? since : ""} onChange={(e) => setParams({ since: e.target.value }, { replace: true })} data-testid="timeline-since">
            {RANGES.map((r) => <option key={r} value={r}>{r}</option>)}
            {!RANGES.includes(since) && <option value="">{since}</option>}
          </select>
        </label>
        <label>
          Depth
          <select value={depth} onChange={(e) => setParams({ depth: e.target.value }, { replace: true })} data-testid="timeline-depth">
            {["0", "1", "2", "3"].map((d) => <option key={d} value={d}>{d}</option>)}
          </select>
        </label>
        <label>
          Diff
          <select value={side ? "side" : "inline"} onChange={(e) => setParams({ diff: e.target.value === "side" ? "side" : "" }, { replace: true })}>
            <option value="inline">inline</option>
            <option value="side">side by side</option>
          </select>
        </label>
      </form>
      <Problem error={error} what="the timeline" />
      <Loading when={loading && !data} />
      {data && (
        <>
          <p class="muted">
            {data.items.length} entries since {new Date(data.since).toLocaleString()} across {data.related.length} objects
            {data.truncated ? " (the newest only)" : ""}
          </p>
          <ol class="timeline">
            {data.items.map((item, i) => (
              <li key={`${item.time} ${i}`} class={`entry ${item.type.toLowerCase()}`} data-testid="timeline-entry">
                <div class="when" title={item.time}>{new Date(item.time).toLocaleTimeString()}</div>
                <div class="what"><Entry item={item} side={side} /></div>
              </li>
            ))}
          </ol>
        </>
      )}
    </div>
  );
}

export function ObjectPage({ params }) {
  const { kind, namespace, name } = params;
  const tab = params.tab || "yaml";
  const object = useApi(kind && name ? objectPath(kind, namespace, name) : null, { every: 5000 });
  const o = object.data;
  if (!kind || !name) return <p>Name an object: <code>/ui/open?kind=KIND&amp;namespace=NS&amp;name=NAME</code>.</p>;
  return (
    <section>
      <h1>
        {o?.kind || kind} <span class="muted">{namespace ? `${namespace}/` : ""}</span>{name}
      </h1>
      {o && <p class="muted">{o.apiVersion} · created {ago(o.metadata?.creationTimestamp)} ago · resourceVersion {o.metadata?.resourceVersion}</p>}
      <nav class="tabs" role="tablist">
        {TABS.map(([id, label]) => (
          <Link key={id} role="tab" aria-selected={tab === id} to={href("object", { ...params, tab: id })} data-testid={`tab-${id}`}>{label}</Link>
        ))}
        <Link to={href("graph", { kind, namespace, name })}>Graph</Link>
      </nav>
      <Problem error={object.error} what={`${kind} ${name}`} />
      {(tab === "yaml" || tab === "json") && o && <Source object={o} as={tab} />}
      {tab === "relations" && <Relations kind={kind} namespace={namespace} name={name} />}
      {tab === "events" && <Events namespace={namespace} name={name} objectKind={o?.kind || kind} />}
      {tab === "timeline" && <Timeline kind={kind} namespace={namespace} name={name} params={params} />}
    </section>
  );
}
