// Talking to the daemon: every request goes to the page's own origin, with
// the bearer token the user gave, kept in this tab's session storage only.
import { useEffect, useRef, useState } from "preact/hooks";

const TOKEN = "grw.token";

export function token() {
  return sessionStorage.getItem(TOKEN) || "";
}

export function setToken(value) {
  if (value) sessionStorage.setItem(TOKEN, value);
  else sessionStorage.removeItem(TOKEN);
  window.dispatchEvent(new Event("grw-token"));
}

/** An answer other than 2xx: its status, reason and message, as the API says them. */
export class ApiError extends Error {
  constructor(status, reason, message) {
    super(message);
    this.status = status;
    this.reason = reason;
  }
}

function headers(accept) {
  const h = { Accept: accept || "application/json" };
  const t = token();
  if (t) h.Authorization = `Bearer ${t}`;
  return h;
}

async function failure(response) {
  const text = await response.text();
  let body = null;
  try {
    body = JSON.parse(text);
  } catch {
    // Not JSON: the text is the message.
  }
  return new ApiError(
    response.status,
    body?.reason || response.statusText,
    body?.message || text || response.statusText,
  );
}

/** GET (or another method) of `path`, its JSON answer. */
export async function api(path, { method = "GET", accept, signal } = {}) {
  const response = await fetch(path, { method, headers: headers(accept), signal });
  if (!response.ok) throw await failure(response);
  const text = await response.text();
  return text ? JSON.parse(text) : null;
}

/** Reads the watch-event lines of `path` until `signal` aborts; each line to `onEvent`. */
export async function stream(path, onEvent, signal) {
  const response = await fetch(path, { headers: headers(), signal });
  if (!response.ok) throw await failure(response);
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let rest = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    rest += decoder.decode(value, { stream: true });
    let end;
    while ((end = rest.indexOf("\n")) >= 0) {
      const line = rest.slice(0, end).trim();
      rest = rest.slice(end + 1);
      if (line) onEvent(JSON.parse(line));
    }
  }
}

/**
 * The JSON answer of `path`, read again every `every` ms if given, when
 * the token changes, and when `key` does: `{data, error, loading}`. A
 * null path reads nothing.
 */
export function useApi(path, { every, accept, key } = {}) {
  const [state, setState] = useState({ data: null, error: null, loading: true });
  const [tick, setTick] = useState(0);
  const current = useRef(path);
  current.current = path;
  useEffect(() => {
    const bump = () => setTick((t) => t + 1);
    window.addEventListener("grw-token", bump);
    return () => window.removeEventListener("grw-token", bump);
  }, []);
  useEffect(() => {
    if (!path) {
      setState({ data: null, error: null, loading: false });
      return undefined;
    }
    const abort = new AbortController();
    let timer;
    const read = async () => {
      try {
        const data = await api(path, { signal: abort.signal, accept });
        if (current.current === path) setState({ data, error: null, loading: false });
      } catch (error) {
        if (abort.signal.aborted) return;
        setState((s) => ({ data: s.data, error, loading: false }));
      }
      if (every && !abort.signal.aborted) timer = setTimeout(read, every);
    };
    setState((s) => ({ ...s, loading: true }));
    read();
    return () => {
      abort.abort();
      clearTimeout(timer);
    };
  }, [path, tick, every, accept, key]);
  return state;
}

/** The native route of an object, or of a kind's list with a namespace. */
export function objectPath(kind, namespace, name) {
  const ns = namespace ? `/api/v1/namespaces/${encodeURIComponent(namespace)}` : "/api/v1";
  const tail = name ? `/${encodeURIComponent(name)}` : "";
  return `${ns}/objects/${encodeURIComponent(kind)}${tail}`;
}

/**
 * An object key of the relationship index (`apps/Deployment shop/web`,
 * `core/Node n1`) as {group, kind, namespace, name, ref} where `ref` is
 * the kind as the native API takes it (`Deployment.apps`, `Node`).
 */
export function parseKey(key) {
  const space = key.indexOf(" ");
  const gk = key.slice(0, space);
  const object = key.slice(space + 1);
  const slash = gk.lastIndexOf("/");
  const group = gk.slice(0, slash) === "core" ? "" : gk.slice(0, slash);
  const kind = gk.slice(slash + 1);
  const parts = object.split("/");
  const [namespace, name] = parts.length > 1 ? parts : ["", parts[0]];
  return { group, kind, namespace, name, ref: group ? `${kind}.${group}` : kind };
}
