// Subscriptions and their deliveries; a subscription's dead letters, each
// openable, replayed or dropped after asking.
import { Fragment } from "preact";
import { useState } from "preact/hooks";
import { api, useApi } from "../api.js";
import { Link, href } from "../url.jsx";
import { Badge, Problem, ago } from "../ui.jsx";

function DeadLetters({ name }) {
  const path = `/api/v1/subscriptions/${encodeURIComponent(name)}/dead-letters`;
  const [tick, setTick] = useState(0);
  const { data, error } = useApi(path, { key: tick });
  const [open, setOpen] = useState(null);
  const [result, setResult] = useState(null);
  const act = async (verb, seq) => {
    const what = seq === undefined ? "every dead letter" : `dead letter ${seq}`;
    if (!window.confirm(`${verb === "replay" ? "Replay" : "Drop"} ${what} of ${name}?`)) return;
    const q = seq === undefined ? "" : `?seq=${seq}`;
    try {
      const answer = verb === "replay" ? await api(`${path}/replay${q}`, { method: "POST" }) : await api(`${path}${q}`, { method: "DELETE" });
      setResult({ ok: verb === "replay" ? `${answer.replayed} replayed` : `${answer.dropped} dropped` });
    } catch (e) {
      setResult({ error: e });
    }
    setTick((t) => t + 1);
  };
  const items = data?.items || [];
  return (
    <div data-testid="dead-letters">
      <h2>Dead letters of {name}</h2>
      <Problem error={error} what="the dead letters" />
      {result?.ok && <p class="ok" role="status" data-testid="action-result">{result.ok}</p>}
      <Problem error={result?.error} what="the action" />
      {data && items.length === 0 && <p class="muted">None.</p>}
      {items.length > 0 && (
        <>
          <p>
            <button type="button" onClick={() => act("replay")}>Replay all</button>{" "}
            <button type="button" onClick={() => act("drop")}>Drop all</button>
          </p>
          <table class="grid">
            <thead><tr><th>Seq</th><th>Change</th><th>Object</th><th>Failed</th><th class="num">Attempts</th><th>Reason</th><th /></tr></thead>
            <tbody>
              {items.map((d) => (
                <Fragment key={d.seq}>
                  <tr data-seq={d.seq}>
                    <td>{d.seq}</td>
                    <td>{d.eventType}</td>
                    <td>{d.gvk} {d.namespace ? `${d.namespace}/` : ""}{d.name}</td>
                    <td title={d.failedAt}>{ago(d.failedAt)} ago</td>
                    <td class="num">{d.attempts}</td>
                    <td class="error-text">{d.reason}</td>
                    <td>
                      <button type="button" onClick={() => setOpen(open === d.seq ? null : d.seq)} data-testid="open-letter">{open === d.seq ? "Close" : "Open"}</button>{" "}
                      <button type="button" onClick={() => act("replay", d.seq)} data-testid="replay-letter">Replay</button>{" "}
                      <button type="button" onClick={() => act("drop", d.seq)}>Drop</button>
                    </td>
                  </tr>
                  {open === d.seq && (
                    <tr>
                      <td colSpan={7}>
                        <p><strong>The receiver's answer:</strong> {d.reason}</p>
                        <pre class="source" data-testid="letter-body">{JSON.stringify(d.payload, null, 2)}</pre>
                      </td>
                    </tr>
                  )}
                </Fragment>
              ))}
            </tbody>
          </table>
        </>
      )}
    </div>
  );
}

export function Subscriptions({ params }) {
  const { data, error } = useApi("/api/v1/subscriptions", { every: 3000 });
  return (
    <section>
      <h1>Subscriptions</h1>
      <Problem error={error} what="the subscriptions" />
      {data && data.items.length === 0 && <p class="muted">No subscription. They come from the configuration or <code>POST /api/v1/subscriptions</code>.</p>}
      {data && data.items.length > 0 && (
        <table class="grid" data-testid="subscriptions">
          <thead>
            <tr><th>Name</th><th>Destination</th><th>Watching</th><th class="num">Pending</th><th class="num">In flight</th><th>Oldest pending</th><th class="num">Delivered</th><th class="num">Retries</th><th class="num">Filtered</th><th class="num">Dead letters</th><th>Last delivery</th><th>Last error</th></tr>
          </thead>
          <tbody>
            {data.items.map((s) => (
              <tr key={s.name} data-name={s.name}>
                <td><Link to={href("subscriptions", { name: s.name })}>{s.name}</Link> <Badge>{s.source}</Badge></td>
                <td>{s.destination}</td>
                <td>{s.watching || <span class="error-text">{s.waiting}</span>}</td>
                <td class="num">{s.pending}</td>
                <td class="num">{s.inFlight}</td>
                <td>{s.pending ? `${Math.round(s.oldestPendingSeconds)} s` : "–"}</td>
                <td class="num">{s.deliveries}</td>
                <td class="num">{s.retries}</td>
                <td class="num">{s.filtered}</td>
                <td class="num">{s.deadLetters > 0 ? <Badge tone="bad">{s.deadLetters}</Badge> : 0}</td>
                <td>{s.lastDeliveryTime ? `${ago(s.lastDeliveryTime)} ago` : "–"}</td>
                <td class="error-text">{s.lastError || ""}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {params.name && <DeadLetters name={params.name} />}
      {params.name && data && (
        <details>
          <summary>Definition</summary>
          <pre class="source">{JSON.stringify(data.items.find((s) => s.name === params.name)?.definition ?? null, null, 2)}</pre>
        </details>
      )}
    </section>
  );
}
