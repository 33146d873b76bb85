// Objects of a kind as `kubectl get` shows them (the Tables GRW serves),
// narrowed by namespace, selectors and part of a name: one table, read
// 500 rows at a time as it scrolls, kept current by the kind's event
// stream.
import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import { api, objectPath, stream, useApi } from "../api.js";
import { Link, href, setParams } from "../url.jsx";
import { Problem, ObjectLink, useFields } from "../ui.jsx";

const TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io";

/**
 * Where the Kubernetes API serves a kind, from its discovery document
 * (which every authenticated user may read): `{root, plural, namespaced,
 * gvk}` for `gvk` (`v1/Pod`, `apps/v1/Deployment`).
 */
async function kubeResource(prefix, gvk, signal) {
  const parts = gvk.split("/");
  const [group, version, kind] = parts.length === 3 ? parts : ["", ...parts];
  const root = group ? `${prefix}/apis/${group}/${version}` : `${prefix}/api/${version}`;
  const discovery = await api(root, { signal });
  const found = discovery.resources.find((r) => r.kind === kind && !r.name.includes("/"));
  if (!found) throw new Error(`${gvk} is not in the API server's discovery`);
  return { root, plural: found.name, namespaced: found.namespaced, gvk };
}

function tablePath(resource, namespace) {
  const ns = namespace && resource.namespaced ? `/namespaces/${encodeURIComponent(namespace)}` : "";
  return `${resource.root}${ns}/${resource.plural}`;
}

const AGGREGATED = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";

/**
 * Every kind the API server serves, from its aggregated discovery (which
 * every authenticated user may read): `{value, label}` to pick from, the
 * value a form the native API takes (`deployments.apps`), the label the
 * kind, its group and version and its short names, so that typing any of
 * them finds it.
 */
function useServedKinds(prefix) {
  const core = useApi(prefix === undefined ? null : `${prefix}/api`, { accept: AGGREGATED });
  const groups = useApi(prefix === undefined ? null : `${prefix}/apis`, { accept: AGGREGATED });
  return useMemo(() => {
    const kinds = [];
    for (const group of [...(core.data?.items || []), ...(groups.data?.items || [])]) {
      const name = group.metadata?.name || "";
      const version = group.versions?.[0];
      for (const r of version?.resources || []) {
        if (!r.verbs?.includes("list")) continue;
        const kind = r.responseKind?.kind || r.resource;
        const short = (r.shortNames || []).join(", ");
        kinds.push({
          value: name ? `${r.resource}.${name}` : r.resource,
          label: `${kind} (${name ? `${name}/` : ""}${version.version})${short ? ` · ${short}` : ""}`,
        });
      }
    }
    return kinds.sort((a, b) => a.value.localeCompare(b.value));
  }, [core.data, groups.data]);
}

/**
 * The kind to show: any form the native API takes can be typed; every kind
 * the API server serves is offered as you type (by name, kind or short
 * name), else the watched ones.
 */
function KindPicker({ served, watched, value }) {
  const [text, setText] = useState(value || "");
  useEffect(() => setText(value || ""), [value]);
  const choose = (e) => {
    e.preventDefault();
    setParams({ kind: text.trim() });
  };
  const offered = served.length > 0 ? served : (watched || []).map((w) => ({ value: w.resource, label: w.gvk }));
  return (
    <form onSubmit={choose} class="picker">
      <label>
        Kind
        <input list="grw-kinds" value={text} onInput={(e) => setText(e.target.value)} placeholder="pods, deploy, Gateway.networking.istio.io…" data-testid="kind-input" />
      </label>
      <datalist id="grw-kinds" data-testid="kind-options">
        {offered.map((k) => (
          <option key={k.value} value={k.value} label={k.label} />
        ))}
      </datalist>
      <button type="submit">Show</button>
    </form>
  );
}

function Filters({ params }) {
  const { field, values } = useFields(params, ["namespace", "labelSelector", "fieldSelector", "name"], "filter");
  const apply = (e) => {
    e.preventDefault();
    setParams(values());
  };
  return (
    <form class="filters" onSubmit={apply}>
      {field("namespace", "Namespace", "all")}
      {field("labelSelector", "Labels", "app=web,tier!=db")}
      {field("fieldSelector", "Fields", "status.phase=Running")}
      {field("name", "Name contains", "front")}
      <button type="submit">Apply</button>
    </form>
  );
}

const CHUNK = 500;
/** Height of a row, px: the table draws only the rows in sight. */
const ROW = 28;
/** Changed rows read again each half second at most: the others wait their turn. */
const REFRESH = 25;

function rowKey(row) {
  const m = row.object?.metadata || {};
  return `${m.namespace || ""}/${m.name}`;
}

/** Whether `row` comes after the object `m` in GRW's (namespace, name) order. */
function after(row, m) {
  const r = row.object?.metadata || {};
  const [a, b] = [r.namespace || "", m.namespace || ""];
  return a === b ? r.name > m.name : a > b;
}

/**
 * The rows of a table, read CHUNK at a time as the reader scrolls toward
 * the end, and kept current: a deleted object's row goes, an added or
 * changed one is read again (as a one-row Table) and put in its place.
 */
function useRows(resource, namespace, query, kind) {
  const [state, setState] = useState({ rows: [], columns: [], more: null, error: null, loading: false, rv: null });
  const stateRef = useRef(state);
  stateRef.current = state;
  const base = resource ? tablePath(resource, namespace) : null;

  const load = async (token, signal) => {
    const q = new URLSearchParams(query);
    q.set("limit", String(CHUNK));
    if (token) q.set("continue", token);
    setState((s) => ({ ...s, loading: true }));
    try {
      const t = await api(`${base}?${q}`, { accept: TABLE, signal });
      setState((s) => ({
        rows: token ? [...s.rows, ...t.rows] : t.rows,
        columns: t.columnDefinitions,
        more: t.metadata?.continue || null,
        error: null,
        loading: false,
        rv: token ? s.rv : t.metadata?.resourceVersion,
      }));
    } catch (error) {
      if (!signal.aborted) setState((s) => ({ ...s, error, loading: false }));
    }
  };

  const abortRef = useRef(null);
  useEffect(() => {
    setState({ rows: [], columns: [], more: null, error: null, loading: false, rv: null });
    if (!base) return undefined;
    const abort = new AbortController();
    abortRef.current = abort;
    load(null, abort.signal);
    return () => abort.abort();
  }, [base, query]);

  // The continue token being read: each is read once, however often the
  // end comes near before its rows arrive.
  const reading = useRef(null);
  const more = () => {
    const s = stateRef.current;
    if (s.more && reading.current !== s.more && abortRef.current) {
      reading.current = s.more;
      load(s.more, abortRef.current.signal);
    }
  };

  // Live: the kind's event stream from the first chunk's resourceVersion.
  useEffect(() => {
    if (!base || !state.rv) return undefined;
    const abort = new AbortController();
    const changed = new Map();
    const q = new URLSearchParams(query);
    q.set("watch", "true");
    q.set("resourceVersion", state.rv);
    stream(`${objectPath(kind, namespace)}?${q}`, (e) => {
      const m = e.object?.metadata;
      if (!m || e.type === "BOOKMARK") return;
      const key = `${m.namespace || ""}/${m.name}`;
      if (e.type === "DELETED") {
        changed.delete(key);
        setState((s) => ({ ...s, rows: s.rows.filter((r) => rowKey(r) !== key) }));
      } else {
        changed.set(key, m);
      }
    }, abort.signal).catch(() => {});
    const timer = setInterval(async () => {
      const batch = [...changed.entries()].slice(0, REFRESH);
      for (const [key] of batch) changed.delete(key);
      const read = await Promise.all(batch.map(([, m]) => {
        const path = `${tablePath(resource, m.namespace)}/${encodeURIComponent(m.name)}`;
        return api(path, { accept: TABLE, signal: abort.signal }).then((t) => t.rows[0]).catch(() => null);
      }));
      const fresh = read.filter(Boolean);
      if (fresh.length === 0) return;
      setState((s) => {
        const rows = s.rows.slice();
        for (const row of fresh) {
          const key = rowKey(row);
          const at = rows.findIndex((r) => rowKey(r) === key);
          if (at >= 0) rows[at] = row;
          else {
            // In (namespace, name) order, if it falls among the rows read so far.
            const next = rows.findIndex((r) => after(r, row.object?.metadata || {}));
            if (next >= 0) rows.splice(next, 0, row);
            else if (!s.more) rows.push(row);
          }
        }
        return { ...s, rows };
      });
    }, 500);
    return () => {
      abort.abort();
      clearInterval(timer);
    };
  }, [base, query, state.rv]);

  return { ...state, loadMore: more };
}

/**
 * Which rows to draw: those in sight of a box `height` px high, and 20
 * more on either side; asks for more when the end comes near.
 */
function useWindow(rows, onNearEnd, height) {
  const [top, setTop] = useState(0);
  const box = useRef(null);
  const first = Math.max(0, Math.floor(top / ROW) - 20);
  const last = Math.min(rows.length, first + Math.ceil(height / ROW) + 40);
  useEffect(() => {
    if (last >= rows.length - 100) onNearEnd();
  }, [last, rows.length]);
  return { box, first, last, onScroll: (e) => setTop(e.currentTarget.scrollTop) };
}

export function Objects({ params }) {
  // The watched kinds are only offered: a caller may not be allowed to list them.
  const kinds = useApi("/api/v1/kinds");
  const settings = useApi("/ui/settings.json");
  const prefix = settings.data?.kubeApiPathPrefix;
  const served = useServedKinds(prefix);
  const kind = params.kind || "";
  // Which kind it is: the native API resolves every form of its name; the
  // list's `metadata.gvk` names it.
  const probe = useApi(kind ? `${objectPath(kind, params.namespace)}?limit=1` : null);
  const gvk = probe.data?.metadata?.gvk;
  const [resource, setResource] = useState(null);
  const [resolveError, setResolveError] = useState(null);
  useEffect(() => {
    setResource(null);
    setResolveError(null);
    if (!gvk || prefix === undefined) return undefined;
    const abort = new AbortController();
    kubeResource(prefix, gvk, abort.signal)
      .then(setResource)
      .catch((error) => !abort.signal.aborted && setResolveError(error));
    return () => abort.abort();
  }, [gvk, prefix]);
  const query = useMemo(() => {
    const q = new URLSearchParams();
    if (params.labelSelector) q.set("labelSelector", params.labelSelector);
    if (params.fieldSelector) q.set("fieldSelector", params.fieldSelector);
    if (params.name) q.set("nameContains", params.name);
    return q.toString();
  }, [params.labelSelector, params.fieldSelector, params.name]);
  const table = useRows(resource, params.namespace, query, kind);
  const height = Math.max(300, window.innerHeight - 250);
  const view = useWindow(table.rows, table.loadMore, height);

  const wide = params.wide === "true";
  const columns = table.columns.map((c, i) => ({ ...c, i })).filter((c) => wide || c.priority === 0);
  const namespaced = resource?.namespaced && !params.namespace;
  const span = columns.length + (namespaced ? 1 : 0);
  return (
    <section>
      <h1>Objects</h1>
      <KindPicker served={served} watched={kinds.data?.items} value={kind} />
      {kind && <Filters params={params} />}
      {!kind && <p class="muted">Pick a kind: its objects show here, as <code>kubectl get</code> shows them.</p>}
      <Problem error={probe.error} what={kind} />
      <Problem error={resolveError} what={`the kinds the API server serves`} />
      <Problem error={table.error} what={`the table of ${kind}`} />
      {resource && table.columns.length > 0 && (
        <>
          <p class="muted" data-testid="objects-count">
            {resource.gvk} · {table.rows.length.toLocaleString()} rows{table.more ? " read so far, more as you scroll" : ""} · live
            {" · "}
            <Link to={href("objects", { ...params, wide: wide ? "" : "true" })}>{wide ? "fewer columns" : "all columns"}</Link>
          </p>
          <div class="table-scroll" ref={view.box} onScroll={view.onScroll} style={`height:${height}px`} data-testid="objects-scroll">
            <table class="grid windowed" data-testid="objects">
              <thead>
                <tr>
                  {namespaced && <th>Namespace</th>}
                  {columns.map((c) => <th key={c.name} title={c.description}>{c.name}</th>)}
                </tr>
              </thead>
              <tbody>
                {view.first > 0 && <tr class="spacer" style={`height:${view.first * ROW}px`}><td colSpan={span} /></tr>}
                {table.rows.slice(view.first, view.last).map((row) => {
                  const meta = row.object?.metadata || {};
                  return (
                    <tr key={rowKey(row)} data-name={meta.name}>
                      {namespaced && <td>{meta.namespace}</td>}
                      {columns.map((c) => (
                        <td key={c.name}>
                          {c.format === "name" ? (
                            <ObjectLink kind={kind} namespace={meta.namespace} name={meta.name}>{row.cells[c.i]}</ObjectLink>
                          ) : (
                            String(row.cells[c.i] ?? "")
                          )}
                        </td>
                      ))}
                    </tr>
                  );
                })}
                {view.last < table.rows.length && (
                  <tr class="spacer" style={`height:${(table.rows.length - view.last) * ROW}px`}><td colSpan={span} /></tr>
                )}
              </tbody>
            </table>
          </div>
        </>
      )}
    </section>
  );
}
