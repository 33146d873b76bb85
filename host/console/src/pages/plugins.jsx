// Every plugin: its kind, version, state, calls, failures, latency, last
// error, and for analyzers what they found.
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
        </>
      )}
    </section>
  );
}
