// The sbx dashboard: a single page that routes on location.hash.
import { h, replace, toast } from "./dom";
import { loadSession, login, logout, setOnUnauthorized, Session } from "./api";
import { sandboxesPage } from "./sandboxes";
import { sandboxPage } from "./sandbox";
import { imagesPage } from "./images";
import { systemPage } from "./system";
import "./style.css";

const app = document.getElementById("app")!;
let session: Session | null = null;
// pageAbort ends the current page's streams and sockets when the route changes.
let pageAbort = new AbortController();

function theme(): "light" | "dark" {
  const saved = localStorage.getItem("sbx-theme");
  if (saved === "light" || saved === "dark") return saved;
  return matchMedia("(prefers-color-scheme: dark)").matches ? "dark" : "light";
}
function applyTheme(t: string) { document.documentElement.dataset.theme = t; }
applyTheme(theme());

function showLogin(failed = false) {
  pageAbort.abort();
  const input = h("input", { id: "key", type: "password", autocomplete: "current-password", placeholder: "sbx_…", required: true, "aria-label": "API key" });
  const err = h("p", { class: "error", id: "login-error" }, failed ? "Wrong API key." : "");
  const form = h("form", { class: "login", method: "post", action: "/ui/login" },
    h("h1", {}, "sbx"),
    h("p", { class: "muted" }, "Log in with an API key. The key is kept by the daemon, not in this browser."),
    h("label", { for: "key" }, "API key"), input,
    h("button", { id: "login", type: "submit", class: "primary" }, "Log in"), err);
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    try {
      session = await login(input.value);
      input.value = "";
      if (location.hash.startsWith("#login")) location.hash = "#/sandboxes";
      route();
    } catch (e: any) {
      err.textContent = e.status === 401 ? "Wrong API key." : e.message;
    }
  });
  replace(app, form);
  input.focus();
}

function nav(active: string) {
  const link = (href: string, label: string, key: string) =>
    h("a", { href, class: active === href ? "active" : "", title: `${label} (g ${key})` }, label);
  return h("header", { class: "top" },
    h("a", { href: "#/sandboxes", class: "brand" }, "sbx"),
    h("nav", {}, link("#/sandboxes", "Sandboxes", "s"), link("#/images", "Images", "i"), link("#/system", "System", "y")),
    h("span", { class: "spacer" }),
    h("span", { class: "muted who", title: "the API key of this session" }, session ? `${session.keyId} · ${session.team}` : ""),
    h("button", { class: "ghost", title: "light or dark (t)", onclick: toggleTheme }, "◐"),
    h("button", { class: "ghost", id: "logout", onclick: async () => { await logout(); session = null; showLogin(); } }, "Log out"));
}

function toggleTheme() {
  const t = document.documentElement.dataset.theme === "dark" ? "light" : "dark";
  localStorage.setItem("sbx-theme", t);
  applyTheme(t);
  window.dispatchEvent(new Event("sbx-theme"));
}

async function route() {
  pageAbort.abort();
  pageAbort = new AbortController();
  if (!session) session = await loadSession();
  if (!session) { showLogin(location.hash === "#login-failed"); return; }
  const parts = location.hash.replace(/^#\/?/, "").split("/").map(decodeURIComponent);
  const main = h("main", {});
  const top = parts[0] === "images" ? "#/images" : parts[0] === "system" ? "#/system" : "#/sandboxes";
  replace(app, nav(top), main);
  const signal = pageAbort.signal;
  try {
    if (parts[0] === "sandboxes" && parts[1]) await sandboxPage(main, parts[1], parts[2] || "overview", signal);
    else if (parts[0] === "images") await imagesPage(main, signal);
    else if (parts[0] === "system") await systemPage(main, signal);
    else await sandboxesPage(main, signal);
  } catch (e: any) {
    if (!signal.aborted) replace(main, h("p", { class: "error" }, e.message));
  }
}

setOnUnauthorized(() => { session = null; showLogin(); });
window.addEventListener("hashchange", route);

// Keyboard: g s / g i / g y go to a page, t switches the theme, / finds.
let pendingG = 0;
document.addEventListener("keydown", (e) => {
  const t = e.target as HTMLElement;
  if (e.ctrlKey || e.metaKey || e.altKey || t.closest("input, textarea, select, .xterm, dialog")) return;
  if (e.key === "g") { pendingG = Date.now(); return; }
  if (Date.now() - pendingG < 1000) {
    const to = { s: "#/sandboxes", i: "#/images", y: "#/system" }[e.key];
    pendingG = 0;
    if (to) { location.hash = to; e.preventDefault(); return; }
  }
  if (e.key === "t") toggleTheme();
  if (e.key === "/") { const f = document.querySelector<HTMLInputElement>("input.filter"); if (f) { f.focus(); e.preventDefault(); } }
  if (e.key === "?") toast("Keys: g s sandboxes · g i images · g y system · / filter · t theme · j/k move · Enter open");
});

route();
