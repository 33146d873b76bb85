// The console's address is its state: each page reads what it shows from
// the path and query, and changes it with `go`, so any view can be shared.
import { useEffect, useState } from "preact/hooks";

export function href(path, params = {}) {
  const query = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v !== undefined && v !== null && v !== "") query.set(k, String(v));
  }
  const q = query.toString();
  return `/ui/${path}${q ? `?${q}` : ""}`;
}

export function go(url, { replace = false } = {}) {
  if (replace) history.replaceState(null, "", url);
  else history.pushState(null, "", url);
  window.dispatchEvent(new Event("grw-go"));
}

/** The current page (the path after /ui/) and its parameters; re-renders on change. */
export function useLocation() {
  const read = () => ({
    page: location.pathname.replace(/^\/ui\/?/, "").replace(/\/$/, ""),
    params: Object.fromEntries(new URLSearchParams(location.search)),
  });
  const [where, setWhere] = useState(read);
  useEffect(() => {
    const update = () => setWhere(read());
    window.addEventListener("popstate", update);
    window.addEventListener("grw-go", update);
    return () => {
      window.removeEventListener("popstate", update);
      window.removeEventListener("grw-go", update);
    };
  }, []);
  return where;
}

/** Sets some parameters of the current page, keeping the others. */
export function setParams(changes, options) {
  const params = Object.fromEntries(new URLSearchParams(location.search));
  go(href(location.pathname.replace(/^\/ui\/?/, ""), { ...params, ...changes }), options);
}

/** A link inside the console: followed without reloading the page. */
export function Link({ to, children, ...rest }) {
  const click = (e) => {
    if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    e.preventDefault();
    go(to);
  };
  return (
    <a href={to} onClick={click} {...rest}>
      {children}
    </a>
  );
}
