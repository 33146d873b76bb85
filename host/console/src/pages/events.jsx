// The event stream of a kind, narrowed by namespace and selectors: each
// change as it comes, pausable, with the rate.
import { useEffect, useRef, useState } from "preact/hooks";
import { api, objectPath, stream } from "../api.js";
import { setParams } from "../url.jsx";
import { Badge, ObjectLink, Problem, useFields } from "../ui.jsx";

const KEPT = 500;

export function LiveEvents({ params }) {
  const kind = params.kind || "";
  const { field, values } = useFields(params, ["kind", "namespace", "labelSelector", "fieldSelector"], "events");
  const [events, setEvents] = useState([]);
  const [error, setError] = useState(null);
  const [paused, setPaused] = useState(false);
  const [rate, setRate] = useState(0);
  const pausedRef = useRef(false);
  pausedRef.current = paused;
  const seen = useRef([]);

  useEffect(() => {
    if (!kind) return undefined;
    setEvents([]);
    setError(null);
    const abort = new AbortController();
    const q = new URLSearchParams({ watch: "true" });
    if (params.labelSelector) q.set("labelSelector", params.labelSelector);
    if (params.fieldSelector) q.set("fieldSelector", params.fieldSelector);
    // From now: the current objects are not news.
    const start = async () => {
      const list = await api(`${objectPath(kind, params.namespace)}?limit=1`, { signal: abort.signal });
      const rv = list?.metadata?.resourceVersion;
      if (rv) q.set("resourceVersion", rv);
      await stream(`${objectPath(kind, params.namespace)}?${q}`, (e) => {
        seen.current.push(Date.now());
        if (pausedRef.current || e.type === "BOOKMARK") return;
        setEvents((list) => [{ at: new Date(), ...e }, ...list].slice(0, KEPT));
      }, abort.signal);
    };
    start().catch((e) => !abort.signal.aborted && setError(e));
    const timer = setInterval(() => {
      const since = Date.now() - 10000;
      seen.current = seen.current.filter((t) => t >= since);
      setRate(seen.current.length / 10);
    }, 1000);
    return () => {
      abort.abort();
      clearInterval(timer);
    };
  }, [kind, params.namespace, params.labelSelector, params.fieldSelector]);

  const apply = (e) => {
    e.preventDefault();
    setParams(values());
  };
  return (
    <section>
      <h1>Live events</h1>
      <form class="filters" onSubmit={apply}>
        {field("kind", "Kind", "pods")}
        {field("namespace", "Namespace", "all")}
        {field("labelSelector", "Labels", "app=web")}
        {field("fieldSelector", "Fields", "status.phase=Running")}
        <button type="submit">Watch</button>
        {kind && (
          <button type="button" onClick={() => setPaused(!paused)} aria-pressed={paused} data-testid="pause">
            {paused ? "Resume" : "Pause"}
          </button>
        )}
        {kind && <span class="muted" data-testid="rate">{rate.toFixed(1)} changes/s{paused ? ", paused" : ""}</span>}
      </form>
      <Problem error={error} what={`the events of ${kind}`} />
      {kind && !error && events.length === 0 && <p class="muted">Waiting for changes…</p>}
      {events.length > 0 && (
        <table class="grid" data-testid="live-events">
          <thead><tr><th>Seen</th><th>Change</th><th>Object</th><th>resourceVersion</th></tr></thead>
          <tbody>
            {events.map((e, i) => {
              const m = e.object?.metadata || {};
              return (
                <tr key={`${m.uid}-${m.resourceVersion}-${i}`}>
                  <td>{e.at.toLocaleTimeString()}</td>
                  <td><Badge tone={e.type === "DELETED" ? "bad" : e.type === "ADDED" ? "good" : ""}>{e.type}</Badge></td>
                  <td>{e.object?.kind} <ObjectLink kind={kind} namespace={m.namespace} name={m.name} /></td>
                  <td>{m.resourceVersion}</td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
    </section>
  );
}
