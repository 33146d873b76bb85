// What is watched and how it fares, the process, and problems first.
import { useRef } from "preact/hooks";
import { useApi } from "../api.js";
import { Link, href } from "../url.jsx";
import { Badge, Loading, Problem, ago, bytes } from "../ui.jsx";

const EVERY = 2000;

/** Events a second per watch, from two readings of its `events` counter. */
function useRates(items) {
  const last = useRef({ at: 0, events: {} });
  const rates = useRef({});
  if (items) {
    const now = Date.now();
    const before = last.current;
    const seconds = (now - before.at) / 1000;
    const events = {};
    for (const w of items) {
      const key = `${w.gvk} ${w.namespace || ""}`;
      events[key] = w.status.events;
      if (before.at && seconds > 0.5 && before.events[key] !== undefined) {
        rates.current[key] = Math.max(0, (w.status.events - before.events[key]) / seconds);
      }
    }
    if (!before.at || seconds > 0.5) last.current = { at: now, events };
  }
  return rates.current;
}

function problems(kinds, plugins, subscriptions) {
  const found = [];
  for (const w of kinds?.items || []) {
    if (w.status.phase !== "ready" || w.status.lastError) {
      found.push({
        what: `watch ${w.gvk}${w.namespace ? ` in ${w.namespace}` : ""}`,
        detail: `${w.status.phase}${w.status.lastError ? `: ${w.status.lastError}` : ""}`,
        link: href("objects", { kind: w.gvk }),
      });
    }
  }
  for (const p of plugins?.items || []) {
    if (p.state !== "ready" || p.lastError) {
      found.push({ what: `plugin ${p.name}`, detail: `${p.state}${p.lastError ? `: ${p.lastError}` : ""}`, link: href("plugins", { name: p.name }) });
    }
  }
  for (const s of subscriptions?.items || []) {
    if (s.deadLetters > 0) {
      found.push({ what: `subscription ${s.name}`, detail: `${s.deadLetters} dead letters`, link: href("subscriptions", { name: s.name }) });
    }
    if (s.pending > 0 && s.oldestPendingSeconds > 60) {
      found.push({ what: `subscription ${s.name}`, detail: `behind: ${s.pending} pending, the oldest ${Math.round(s.oldestPendingSeconds)} s`, link: href("subscriptions", { name: s.name }) });
    }
    if (s.waiting) found.push({ what: `subscription ${s.name}`, detail: `waiting: ${s.waiting}`, link: href("subscriptions", { name: s.name }) });
  }
  return found;
}

export function Overview() {
  const kinds = useApi("/api/v1/kinds", { every: EVERY });
  const plugins = useApi("/api/v1/plugins", { every: 5000 });
  const subscriptions = useApi("/api/v1/subscriptions", { every: 5000 });
  const process = useApi("/api/v1/process", { every: 5000 });
  const rates = useRates(kinds.data?.items);
  const found = problems(kinds.data, plugins.data, subscriptions.data);
  // "No problem" is said only of what was read.
  const known = kinds.data && plugins.data && subscriptions.data;
  const unreadable = kinds.error || plugins.error || subscriptions.error;
  const p = process.data;
  return (
    <section>
      <h1>Overview</h1>
      <div class="cards">
        <div class="card" data-testid="process">
          <h2>Process</h2>
          <Problem error={process.error} what="the process" />
          {p && (
            <dl>
              <dt>Version</dt><dd>{p.version} ({p.build})</dd>
              <dt>Up</dt><dd title={p.startedAt}>{ago(p.startedAt)}</dd>
              <dt>Memory</dt><dd>{bytes(p.residentBytes)}</dd>
              <dt>Objects</dt><dd>{p.cachedObjects.toLocaleString()} in {p.watches} watches</dd>
              {p.replay && (<><dt>Source</dt><dd>a recording, replayed</dd></>)}
            </dl>
          )}
        </div>
        <div class="card" data-testid="problems">
          <h2>Problems</h2>
          {found.length > 0 ? (
            <ul class="problems">
              {found.map((f) => (
                <li key={f.what + f.detail}>
                  <Link to={f.link}>{f.what}</Link>: {f.detail}
                </li>
              ))}
            </ul>
          ) : known ? (
            <p class="ok">None: every watch is ready, every plugin loaded, no dead letters.</p>
          ) : (
            // What could not be read is said below; "none" would be a guess.
            <Loading when={!unreadable} />
          )}
          <Problem error={plugins.error} what="plugins" />
          <Problem error={subscriptions.error} what="subscriptions" />
        </div>
      </div>
      <h2>Watches</h2>
      <Problem error={kinds.error} what="the watches" />
      {kinds.data && (
        <table class="grid" data-testid="watches">
          <thead>
            <tr><th>Kind</th><th>Namespace</th><th>Phase</th><th class="num">Objects</th><th class="num">Events/s</th><th>Last event</th><th>Last error</th></tr>
          </thead>
          <tbody>
            {kinds.data.items.map((w) => {
              const key = `${w.gvk} ${w.namespace || ""}`;
              const rate = rates[key];
              return (
                <tr key={key} data-kind={w.gvk}>
                  <td><Link to={href("objects", { kind: w.gvk, namespace: w.namespace })}>{w.gvk}</Link>{w.onDemand && <Badge>on demand</Badge>}</td>
                  <td>{w.namespace || "all"}</td>
                  <td><Badge tone={w.status.phase === "ready" ? "good" : "bad"}>{w.status.phase}</Badge></td>
                  <td class="num">{w.objects.toLocaleString()}</td>
                  <td class="num">{rate === undefined ? "…" : rate.toFixed(1)}</td>
                  <td title={w.status.lastEventTime || ""}>{w.status.lastEventTime ? `${ago(w.status.lastEventTime)} ago` : "–"}</td>
                  <td class="error-text">{w.status.lastError || ""}</td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
    </section>
  );
}
