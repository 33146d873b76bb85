// The console: a bar of pages, the token box, and the page the URL names.
import { render } from "preact";
import { useEffect, useState } from "preact/hooks";
import { setToken, token } from "./api.js";
import { Link, useLocation, href } from "./url.jsx";
import { Overview } from "./pages/overview.jsx";
import { Objects } from "./pages/objects.jsx";
import { ObjectPage } from "./pages/object.jsx";
import { GraphPage } from "./pages/graph.jsx";
import { Plugins } from "./pages/plugins.jsx";
import { Subscriptions } from "./pages/subscriptions.jsx";
import { LiveEvents } from "./pages/events.jsx";

const PAGES = [
  ["", "Overview", Overview],
  ["objects", "Objects", Objects],
  ["graph", "Graph", GraphPage],
  ["events", "Live events", LiveEvents],
  ["plugins", "Plugins", Plugins],
  ["subscriptions", "Subscriptions", Subscriptions],
];

function TokenBox() {
  const [open, setOpen] = useState(false);
  const [value, setValue] = useState("");
  const has = Boolean(token());
  const save = (e) => {
    e.preventDefault();
    setToken(value.trim());
    setValue("");
    setOpen(false);
  };
  return (
    <div class="token">
      <button type="button" onClick={() => setOpen(!open)} aria-expanded={open} data-testid="token-button">
        {has ? "Token set" : "Token"}
      </button>
      {open && (
        <form onSubmit={save} class="token-form">
          <label>
            Bearer token (kept in this tab only)
            <input type="password" value={value} onInput={(e) => setValue(e.target.value)} autocomplete="off" autofocus data-testid="token-input" />
          </label>
          <button type="submit">Use</button>
          {has && (
            <button type="button" onClick={() => { setToken(""); setOpen(false); }}>
              Forget
            </button>
          )}
        </form>
      )}
    </div>
  );
}

function App() {
  const { page, params } = useLocation();
  // `/ui/open?kind=&namespace=&name=`: a deep link to an object's page.
  const name = page === "open" || page === "object" ? "object" : page;
  const found = PAGES.find(([path]) => path === name);
  const Page = name === "object" ? ObjectPage : found?.[2];
  const [, title] = found || [null, name === "object" ? params.name : "Not found"];
  useEffect(() => {
    document.title = `${title || "GRW"} · GRW`;
  }, [title]);
  return (
    <>
      <header class="bar">
        <Link to="/ui/" class="brand">GRW</Link>
        <nav aria-label="Pages">
          {PAGES.map(([path, label]) => (
            <Link key={path} to={href(path)} aria-current={path === name ? "page" : undefined}>
              {label}
            </Link>
          ))}
        </nav>
        <TokenBox />
      </header>
      <main id="main">
        {Page ? <Page params={params} /> : <p>No page at this address. <Link to="/ui/">Overview</Link></p>}
      </main>
    </>
  );
}

const root = document.getElementById("app");
// The page's "Loading" line goes: the console renders in its place.
root.replaceChildren();
render(<App />, root);
