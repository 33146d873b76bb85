// Every plugin: its kind, version, state, calls, failures, latency, last
// error, and for analyzers what they found; then the loads, failures and
// removals of plugin files, newest first.
import { useApi } from "../api.js";
import { Badge, Problem, ago } from "../ui.jsx";

export function Plugins() {
  const { data, error } = useApi("/api/v1/plugins", { every: 5000 });
  return (
    <section>
      <h1>Plugins</h1>
      <Problem error={error} what="the plugins" />
      {data && (
        <>
          <p class="muted">
            {data.items.length} plugins{data.enabled ? ", and a plugin directory watched for new ones" : "; no plugin directory is configured (pluginDir): only built-in ones run"}.
          </p>
          <table class="grid" data-testid="plugins">
            <thead>
              <tr><th>Name</th><th>Kind</th><th>Origin</th><th>State</th><th class="num">Calls</th><th class="num">Failures</th><th class="num">p50</th><th class="num">p99</th><th>Analysis</th><th>Last error</th></tr>
            </thead>
            <tbody>
              {data.items.map((p) => {
                const f = p.stats?.failures || {};
                const failures = (f.trap || 0) + (f.timeout || 0) + (f.memory || 0);
                return (
                  <tr key={p.name} data-name={p.name}>
                    <td>{p.name}{p.hash && <div class="muted" title={p.hash}>{p.hash.slice(0, 12)}</div>}</td>
                    <td>{p.kind}</td>
                    <td>{p.origin}{p.witVersion ? ` · WIT ${p.witVersion}` : ""}</td>
                    <td><Badge tone={p.state === "ready" ? "good" : "bad"}>{p.state}</Badge></td>
                    <td class="num">{(p.stats?.calls ?? 0).toLocaleString()}</td>
                    <td class="num" title={`trap ${f.trap || 0}, timeout ${f.timeout || 0}, memory ${f.memory || 0}`}>{failures}</td>
                    <td class="num">{p.stats?.latencyMicros?.p50 ?? "–"} µs</td>
                    <td class="num">{p.stats?.latencyMicros?.p99 ?? "–"} µs</td>
                    <td>{p.analysis ? `${p.analysis.edges} edges from ${p.analysis.objects} objects, last ${ago(p.analysis.lastAnalysisTime)} ago` : ""}</td>
                    <td class="error-text">{p.lastError || ""}</td>
                  </tr>
                );
              })}
            </tbody>
          </table>
          <h2>Reloads</h2>
          {(data.reloads || []).length === 0 ? (
            <p class="muted">No plugin file was loaded, failed or removed since the start.</p>
          ) : (
            <table class="grid" data-testid="reloads">
              <thead><tr><th>When</th><th>Plugin</th><th>What</th><th>Version</th><th class="num">Load</th><th>Error</th></tr></thead>
              <tbody>
                {data.reloads.map((r, i) => (
                  <tr key={`${r.time} ${r.plugin} ${i}`}>
                    <td title={r.time}>{ago(r.time)} ago</td>
                    <td>{r.plugin}</td>
                    <td><Badge tone={r.outcome === "failed" ? "bad" : r.outcome === "loaded" ? "good" : ""}>{r.outcome}</Badge></td>
                    <td title={r.hash || ""}>{r.hash ? r.hash.slice(0, 12) : ""}</td>
                    <td class="num">{r.loadMillis === undefined ? "" : `${r.loadMillis} ms`}</td>
                    <td class="error-text">{r.error || ""}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </>
      )}
    </section>
  );
}
