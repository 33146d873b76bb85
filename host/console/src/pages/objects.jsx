// Objects of a kind as `kubectl get` shows them (the Tables GRW serves),
// narrowed by namespace, selectors and part of a name, a page at a time,
// kept current by the kind's event stream.
import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import { api, objectPath, stream, useApi } from "../api.js";
import { Link, href, setParams } from "../url.jsx";
import { Problem, ObjectLink } from "../ui.jsx";

const TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io";
const PAGE = 100;

/**
 * Where the Kubernetes API serves a kind, from its discovery document
 * (which every authenticated user may read): `{path, namespaced}` for
 * `gvk` (`v1/Pod`, `apps/v1/Deployment`).
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

/** The kinds to pick from: the watched ones; any other form the API takes can be typed. */
function KindPicker({ kinds, value }) {
  const [text, setText] = useState(value || "");
  useEffect(() => setText(value || ""), [value]);
  const choose = (e) => {
    e.preventDefault();
    setParams({ kind: text.trim(), continue: "" });
  };
  return (
    <form onSubmit={choose} class="picker">
      <label>
        Kind
        <input list="grw-kinds" value={text} onInput={(e) => setText(e.target.value)} placeholder="pods, deploy, Gateway.networking.istio.io…" data-testid="kind-input" />
      </label>
      <datalist id="grw-kinds">
        {(kinds || []).map((w) => (
          <option key={w.gvk} value={w.resource}>{w.gvk}</option>
        ))}
      </datalist>
      <button type="submit">Show</button>
    </form>
  );
}

function Filters({ params }) {
  const [form, setForm] = useState(params);
  useEffect(() => setForm(params), [params.namespace, params.labelSelector, params.fieldSelector, params.name]);
  const field = (key, label, hint) => (
    <label>
      {label}
      <input value={form[key] || ""} placeholder={hint} onInput={(e) => setForm({ ...form, [key]: e.target.value })} data-testid={`filter-${key}`} />
    </label>
  );
  const apply = (e) => {
    e.preventDefault();
    setParams({
      namespace: form.namespace?.trim(),
      labelSelector: form.labelSelector?.trim(),
      fieldSelector: form.fieldSelector?.trim(),
      name: form.name?.trim(),
      continue: "",
    });
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

export function Objects({ params }) {
  // The watched kinds are only offered: a caller may not be allowed to list them.
  const kinds = useApi("/api/v1/kinds");
  const settings = useApi("/ui/settings.json");
  const prefix = settings.data?.kubeApiPathPrefix;
  const kind = params.kind || "";
  // Which watch answers the kind: the native API resolves every form of
  // its name; the list's `metadata.gvk` names it.
  const probe = useApi(kind ? `${objectPath(kind, params.namespace)}?limit=1` : null);
  const gvk = probe.data?.metadata?.gvk;
  const [watch, setWatch] = useState(null);
  const [table, setTable] = useState({ data: null, error: null });
  useEffect(() => {
    setWatch(null);
    if (!gvk || prefix === undefined) return undefined;
    const abort = new AbortController();
    kubeResource(prefix, gvk, abort.signal)
      .then(setWatch)
      .catch((error) => !abort.signal.aborted && setTable({ data: null, error }));
    return () => abort.abort();
  }, [gvk, prefix]);
  const [version, setVersion] = useState(0);
  const query = useMemo(() => {
    const q = new URLSearchParams({ limit: String(PAGE) });
    if (params.labelSelector) q.set("labelSelector", params.labelSelector);
    if (params.fieldSelector) q.set("fieldSelector", params.fieldSelector);
    if (params.name) q.set("nameContains", params.name);
    return q;
  }, [params.labelSelector, params.fieldSelector, params.name]);

  useEffect(() => {
    if (!watch) return undefined;
    const abort = new AbortController();
    const q = new URLSearchParams(query);
    if (params.continue) q.set("continue", params.continue);
    api(`${tablePath(watch, params.namespace)}?${q}`, { accept: TABLE, signal: abort.signal })
      .then((data) => setTable({ data, error: null }))
      .catch((error) => !abort.signal.aborted && setTable({ data: null, error }));
    return () => abort.abort();
  }, [watch, query, params.namespace, params.continue, version]);

  // Live: any change of the selection reads the page again (at most twice a second).
  const rv = table.data?.metadata?.resourceVersion;
  const pending = useRef(null);
  useEffect(() => {
    if (!watch || !rv) return undefined;
    const abort = new AbortController();
    const q = new URLSearchParams(query);
    q.delete("limit");
    q.set("watch", "true");
    q.set("resourceVersion", rv);
    stream(`${objectPath(kind, params.namespace)}?${q}`, () => {
      if (!pending.current) {
        pending.current = setTimeout(() => {
          pending.current = null;
          setVersion((v) => v + 1);
        }, 500);
      }
    }, abort.signal).catch(() => {});
    return () => {
      abort.abort();
      clearTimeout(pending.current);
      pending.current = null;
    };
  }, [watch, rv === undefined, query, params.namespace, kind]);

  const t = table.data;
  const wide = params.wide === "true";
  const columns = (t?.columnDefinitions || []).map((c, i) => ({ ...c, i })).filter((c) => wide || c.priority === 0);
  const namespaced = watch?.namespaced;
  return (
    <section>
      <h1>Objects</h1>
      <KindPicker kinds={kinds.data?.items} value={kind} />
      {kind && <Filters params={params} />}
      {!kind && <p class="muted">Pick a kind: its objects show here, as <code>kubectl get</code> shows them.</p>}
      <Problem error={probe.error} what={kind} />
      <Problem error={table.error} what={`the table of ${kind}`} />
      {t && (
        <>
          <p class="muted">
            {watch.gvk} · {t.rows.length} shown{t.metadata?.continue ? ", more on the next page" : ""} · live
            {" · "}
            <Link to={href("objects", { ...params, wide: wide ? "" : "true" })}>{wide ? "fewer columns" : "all columns"}</Link>
          </p>
          <table class="grid" data-testid="objects">
            <thead>
              <tr>
                {namespaced && !params.namespace && <th>Namespace</th>}
                {columns.map((c) => <th key={c.name} title={c.description}>{c.name}</th>)}
              </tr>
            </thead>
            <tbody>
              {t.rows.map((row) => {
                const meta = row.object?.metadata || {};
                return (
                  <tr key={`${meta.namespace}/${meta.name}`} data-name={meta.name}>
                    {namespaced && !params.namespace && <td>{meta.namespace}</td>}
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
            </tbody>
          </table>
          <nav class="pager">
            {params.continue && <Link to={href("objects", { ...params, continue: "" })}>First page</Link>}
            {t.metadata?.continue && <Link to={href("objects", { ...params, continue: t.metadata.continue })} data-testid="next-page">Next page</Link>}
          </nav>
        </>
      )}
    </section>
  );
}
