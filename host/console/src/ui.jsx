// Pieces every page uses.
import { useEffect, useState } from "preact/hooks";
import { Link, href } from "./url.jsx";

/**
 * Text fields for the parameters `keys` of the page, edited apart from
 * the URL until the form is sent: `field(key, label, hint)` draws one
 * (test id `<prefix>-<key>`), `values()` gives their trimmed texts.
 */
export function useFields(params, keys, prefix) {
  const [form, setForm] = useState(params);
  useEffect(() => setForm(params), keys.map((k) => params[k]));
  const field = (key, label, hint) => (
    <label>
      {label}
      <input value={form[key] || ""} placeholder={hint} onInput={(e) => setForm({ ...form, [key]: e.target.value })} data-testid={`${prefix}-${key}`} />
    </label>
  );
  const values = () => Object.fromEntries(keys.map((k) => [k, form[k]?.trim()]));
  return { field, values };
}

/** What went wrong, as the API said it; a refusal says it is one. */
export function Problem({ error, what }) {
  if (!error) return null;
  const refused = error.status === 401 || error.status === 403;
  return (
    <div class={`problem ${refused ? "refused" : ""}`} role="alert" data-testid="problem">
      <strong>
        {refused ? "Not allowed to read" : "Could not read"} {what}
        {error.status ? ` (${error.status}${error.reason ? ` ${error.reason}` : ""})` : ""}
      </strong>
      <span>{error.message}</span>
      {error.status === 401 && <span>Give a token with the key button at the top right.</span>}
    </div>
  );
}

export function Loading({ when }) {
  return when ? <p class="muted">Loading…</p> : null;
}

/** How long ago an RFC 3339 time was, short: `5s`, `3m`, `2h`, `4d`. */
export function ago(time, now = Date.now()) {
  if (!time) return "–";
  const s = Math.max(0, Math.round((now - Date.parse(time)) / 1000));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m`;
  if (s < 86400) return `${Math.floor(s / 3600)}h`;
  return `${Math.floor(s / 86400)}d`;
}

export function bytes(n) {
  if (n === null || n === undefined) return "–";
  const units = ["B", "KiB", "MiB", "GiB"];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) {
    n /= 1024;
    i += 1;
  }
  return `${n.toFixed(i ? 1 : 0)} ${units[i]}`;
}

/** A link to an object's page. */
export function ObjectLink({ kind, namespace, name, children }) {
  return (
    <Link to={href("object", { kind, namespace, name })}>
      {children || (namespace ? `${namespace}/${name}` : name)}
    </Link>
  );
}

export function Badge({ tone, children }) {
  return <span class={`badge ${tone || ""}`}>{children}</span>;
}
