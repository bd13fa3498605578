// The sandboxes table: live from the events stream.
import { h, replace, bytes, ago, toast } from "./dom";
import { api, ui, followForever } from "./api";

export interface Sandbox {
  id: string; name?: string; state: string; reason?: string; error?: string; image: string; class: string;
  labels: Record<string, string>; cpu: number; memoryMiB: number; diskMiB: number; parent?: string; snapshot?: string;
  createdAt: string; startedAt?: string; stoppedAt?: string; lastActivityAt?: string; expiresAt?: string; expiresAction?: string;
  network?: string; env?: Record<string, string>; workdir: string; autoStopSeconds: number;
}
export interface Sample { t: number; cpu: number; mem: number }

export function stateBadge(state: string) {
  return h("span", { class: `state state-${state}` }, state);
}

export function labelsText(l: Record<string, string>) {
  return Object.entries(l || {}).map(([k, v]) => `${k}=${v}`).join(" ");
}

// matches reports whether sb passes the filter: words are state:X, k=v
// (a label) or text in the name, id or image.
function matches(sb: Sandbox, filter: string): boolean {
  for (const w of filter.trim().split(/\s+/).filter(Boolean)) {
    if (w.startsWith("state:")) { if (sb.state !== w.slice(6)) return false; continue; }
    if (w.includes("=")) { const [k, v] = w.split("=", 2); if (sb.labels?.[k] !== v) return false; continue; }
    const hay = `${sb.name ?? ""} ${sb.id} ${sb.image}`.toLowerCase();
    if (!hay.includes(w.toLowerCase())) return false;
  }
  return true;
}

export async function sandboxesPage(main: HTMLElement, signal: AbortSignal) {
  const byId = new Map<string, Sandbox>();
  let stats: Record<string, Sample> = {};
  const saved = sessionStorage.getItem("sbx-filter") ?? "";
  const filter = h("input", { class: "filter", type: "search", placeholder: "Filter: state:started env=prod name…  ( / )", value: saved, "aria-label": "filter" });
  const live = h("span", { class: "live", title: "updated from the events stream" }, "●");
  const tbody = h("tbody", {});
  const count = h("span", { class: "muted" });
  const table = h("table", { class: "list sandboxes" },
    h("thead", {}, h("tr", {}, ...["Sandbox", "State", "Class", "Image", "Labels", "CPU", "Memory", "Last activity", "Next"].map((c) => h("th", {}, c)))),
    tbody);
  const create = createForm();
  replace(main,
    h("div", { class: "bar" }, h("h2", {}, "Sandboxes"), live, count, h("span", { class: "spacer" }), filter,
      h("button", { class: "primary", id: "new-sandbox", onclick: () => create.toggleAttribute("open") }, "New sandbox")),
    create,
    h("div", { class: "scroll" }, table));

  let selected = 0;
  const render = () => {
    const rows = [...byId.values()].filter((sb) => sb.state !== "deleted" && matches(sb, filter.value))
      .sort((a, b) => b.createdAt.localeCompare(a.createdAt));
    count.textContent = `${rows.length} of ${[...byId.values()].filter((s) => s.state !== "deleted").length}`;
    selected = Math.min(selected, Math.max(rows.length - 1, 0));
    replace(tbody, rows.length ? rows.map((sb, i) => {
      const st = stats[sb.id];
      return h("tr", { "data-id": sb.id, class: i === selected ? "sel" : "", tabindex: 0, onclick: () => { location.hash = `#/sandboxes/${sb.id}`; } },
        h("td", {}, h("a", { href: `#/sandboxes/${sb.id}` }, sb.name || sb.id), sb.name ? h("div", { class: "muted mono small" }, sb.id) : null),
        h("td", { class: "state-cell" }, stateBadge(sb.state), sb.reason && sb.reason !== "user" ? h("div", { class: "muted small" }, sb.reason) : null),
        h("td", {}, sb.class),
        h("td", { class: "mono small" }, sb.image || sb.snapshot),
        h("td", { class: "small" }, labelsText(sb.labels)),
        h("td", { class: "num" }, sb.state === "started" && st ? `${st.cpu.toFixed(1)}%` : "–"),
        h("td", { class: "num" }, sb.state === "started" && st ? bytes(st.mem) : "–"),
        h("td", { class: "small" }, ago(sb.lastActivityAt)),
        h("td", { class: "small" }, sb.expiresAt ? `${sb.expiresAction} ${ago(sb.expiresAt)}` : ""));
    }) : h("tr", {}, h("td", { colspan: 9, class: "muted empty" }, byId.size ? "No sandbox matches the filter." : "No sandboxes yet.")));
  };
  filter.addEventListener("input", () => { sessionStorage.setItem("sbx-filter", filter.value); render(); });
  filter.addEventListener("keydown", (e) => { if (e.key === "Escape") { filter.value = ""; filter.blur(); render(); } });

  const refresh = async () => {
    const [list, st] = await Promise.all([api<Sandbox[]>("GET", "/v1/sandboxes"), ui<Record<string, Sample>>("/ui/stats").catch(() => ({}))]);
    byId.clear();
    for (const sb of list) byId.set(sb.id, sb);
    stats = st;
    render();
  };
  await refresh();

  // Events move a row at once; a debounced list refresh fills in the rest
  // (a new sandbox's details, deadlines, labels).
  let timer = 0;
  let frame = 0;
  let after = 0;
  followForever(() => `/v1/events?follow=true&after=${after}`, (line) => {
    if (line.type !== "event") return;
    after = line.seq;
    const sb = byId.get(line.sandboxId);
    if (sb) { sb.state = line.state; sb.reason = line.reason; }
    // The stream starts with the kept history: draw once per frame, not per event.
    if (!frame) frame = requestAnimationFrame(() => { frame = 0; render(); });
    clearTimeout(timer);
    timer = window.setTimeout(() => refresh().catch(() => {}), 300);
  }, signal, (on) => live.classList.toggle("on", on));
  const poll = window.setInterval(() => ui<Record<string, Sample>>("/ui/stats").then((s) => { stats = s; render(); }).catch(() => {}), 10000);
  signal.addEventListener("abort", () => { clearInterval(poll); clearTimeout(timer); cancelAnimationFrame(frame); document.removeEventListener("keydown", keys); });

  const keys = (e: KeyboardEvent) => {
    if ((e.target as HTMLElement).closest("input, textarea, select, dialog")) return;
    const rows = tbody.querySelectorAll("tr[data-id]");
    if (e.key === "j" || e.key === "ArrowDown") selected = Math.min(selected + 1, rows.length - 1);
    else if (e.key === "k" || e.key === "ArrowUp") selected = Math.max(selected - 1, 0);
    else if (e.key === "Enter" && rows[selected]) { location.hash = `#/sandboxes/${(rows[selected] as HTMLElement).dataset.id}`; return; }
    else if (e.key === "n") { create.setAttribute("open", ""); (create.querySelector("input") as HTMLInputElement).focus(); e.preventDefault(); return; }
    else return;
    e.preventDefault();
    render();
  };
  document.addEventListener("keydown", keys);
}

// createForm makes a sandbox: image, class, limits, policy, network.
function createForm() {
  const f = (name: string, label: string, attrs: any = {}) => h("label", {}, label, h("input", { name, ...attrs }));
  const form = h("form", { class: "grid" },
    f("name", "Name", { placeholder: "optional" }),
    f("image", "Image", { placeholder: "default" }),
    h("label", {}, "Class", h("select", { name: "class" }, h("option", { value: "" }, "default"), h("option", { value: "container" }, "container"), h("option", { value: "gvisor" }, "gvisor"))),
    f("cpu", "CPUs", { type: "number", step: "0.25", min: "0" }),
    f("memoryMiB", "Memory MiB", { type: "number", min: "0" }),
    f("diskMiB", "Disk MiB", { type: "number", min: "0" }),
    f("autoStopSeconds", "Auto-stop after idle (s)", { type: "number", min: "0" }),
    f("ttlSeconds", "TTL (s)", { type: "number", min: "0" }),
    f("labels", "Labels", { placeholder: "k=v k2=v2" }),
    h("label", {}, "Network", h("select", { name: "network" }, h("option", { value: "" }, "default"), h("option", { value: "bridge" }, "bridge"), h("option", { value: "none" }, "none"))),
    h("label", {}, "Egress", h("select", { name: "egressMode" }, ...["", "allow-all", "allow-list", "deny-list", "block-all"].map((m) => h("option", { value: m }, m || "default")))),
    f("egressList", "Egress list", { placeholder: "example.com 10.0.0.0/8" }),
    h("div", { class: "buttons" }, h("button", { class: "primary", type: "submit" }, "Create")));
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    const d = new FormData(form);
    const s = (k: string) => String(d.get(k) ?? "").trim();
    const n = (k: string) => (s(k) ? Number(s(k)) : undefined);
    const req: any = { name: s("name") || undefined, image: s("image") || undefined, class: s("class") || undefined,
      cpu: n("cpu"), memoryMiB: n("memoryMiB"), diskMiB: n("diskMiB"), autoStopSeconds: n("autoStopSeconds"), ttlSeconds: n("ttlSeconds"),
      network: s("network") || undefined };
    if (s("labels")) req.labels = Object.fromEntries(s("labels").split(/\s+/).map((p) => p.split("=", 2)));
    if (s("egressMode")) {
      const list = s("egressList").split(/\s+/).filter(Boolean);
      req.egress = { mode: s("egressMode"), cidrs: list.filter((x) => /^[0-9.:]+(\/\d+)?$/.test(x)), domains: list.filter((x) => !/^[0-9.:]+(\/\d+)?$/.test(x)) };
    }
    try {
      const sb = await api<Sandbox>("POST", "/v1/sandboxes", req);
      toast(`Created ${sb.name || sb.id}`);
      form.reset();
    } catch (err: any) { toast(err.message, true); }
  });
  return h("details", { class: "create" }, h("summary", {}, "Create a sandbox"), form);
}
