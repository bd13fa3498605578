// One sandbox: overview (actions, details, timeline, charts, lineage,
// ports), logs, terminal and files. Its state follows the sandbox's events.
import { h, replace, bytes, ago, time, confirmDialog, toast } from "./dom";
import { api, ui, enc, followForever } from "./api";
import { Sandbox, Sample, stateBadge, labelsText } from "./sandboxes";
import { openTerminal } from "./terminal";
import { lineChart } from "./chart";
import { filesView } from "./files";

const tabs = ["overview", "logs", "terminal", "files"];

export async function sandboxPage(main: HTMLElement, id: string, tab: string, signal: AbortSignal) {
  let sb = await api<Sandbox>("GET", `/v1/sandboxes/${enc(id)}`);
  id = sb.id;
  const head = h("div", { class: "bar" });
  const actions = h("div", { class: "actions", id: "actions" });
  const body = h("section", { class: "tabbody" });
  const tabBar = h("nav", { class: "tabs" }, ...tabs.map((t, i) =>
    h("a", { href: `#/sandboxes/${id}/${t}`, class: t === tab ? "active" : "", title: `${t} (${i + 1})` }, t[0].toUpperCase() + t.slice(1))));
  replace(main, head, actions, tabBar, body);

  const renderHead = () => {
    replace(head, h("a", { href: "#/sandboxes", class: "muted" }, "Sandboxes /"), h("h2", { id: "sandbox-name" }, sb.name || sb.id),
      h("span", { id: "sandbox-state" }, stateBadge(sb.state)), sb.error ? h("span", { class: "error small" }, sb.error) : null);
    renderActions();
  };
  const act = (label: string, states: string[], run: () => Promise<any>, danger?: string) =>
    h("button", { "data-action": label.toLowerCase(), disabled: !states.includes(sb.state), class: danger ? "danger" : "",
      onclick: async () => {
        if (danger && !(await confirmDialog(danger, label))) return;
        try { await run(); } catch (e: any) { toast(e.message, true); }
      } }, label);
  const post = (verb: string, body?: unknown) => () => api("POST", `/v1/sandboxes/${enc(id)}/${verb}`, body);
  const renderActions = () => replace(actions,
    act("Start", ["stopped", "archived", "error"], post("start")),
    act("Stop", ["started", "paused"], post("stop"), `Stop ${sb.name || sb.id}? Its processes get SIGTERM, then SIGKILL.`),
    act("Pause", ["started"], post("pause")),
    act("Resume", ["paused"], post("resume")),
    act("Fork", ["started", "stopped", "paused"], async () => {
      const r = await api("POST", `/v1/sandboxes/${enc(id)}/fork`, { count: 1 });
      toast(`Forked: ${r.forks.map((f: Sandbox) => f.name || f.id).join(", ")}`);
    }),
    act("Snapshot", ["started", "stopped", "paused"], async () => {
      const name = `${sb.name || sb.id}-${new Date().toISOString().replace(/[-:]/g, "").slice(0, 15).toLowerCase()}`;
      await api("POST", `/v1/sandboxes/${enc(id)}/snapshots`, { name });
      toast(`Snapshot ${name} saved`);
    }),
    act("Archive", ["stopped"], post("archive"), `Archive ${sb.name || sb.id}? Its files move to the blob store until the next start.`),
    act("Delete", ["started", "stopped", "paused", "archived", "error"], async () => {
      await api("DELETE", `/v1/sandboxes/${enc(id)}`);
      location.hash = "#/sandboxes";
    }, `Delete ${sb.name || sb.id} and all its files? This cannot be undone.`));
  renderHead();

  const timeline = h("ol", { class: "timeline", id: "timeline" });
  let after = 0;
  let timer = 0;
  followForever(() => `/v1/sandboxes/${enc(id)}/events?follow=true&after=${after}`, (line) => {
    if (line.type !== "event") return;
    after = line.seq;
    timeline.prepend(h("li", {}, h("time", { class: "muted small", title: time(line.time) }, new Date(line.time).toLocaleTimeString()),
      stateBadge(line.state), h("span", { class: "small" }, [line.reason, line.message].filter(Boolean).join(": "))));
    sb.state = line.state;
    renderHead();
    clearTimeout(timer);
    timer = window.setTimeout(() => api<Sandbox>("GET", `/v1/sandboxes/${enc(id)}`).then((x) => { sb = x; renderHead(); }).catch(() => {}), 300);
  }, signal);

  const keys = (e: KeyboardEvent) => {
    if ((e.target as HTMLElement).closest("input, textarea, select, .xterm, dialog")) return;
    const n = Number(e.key);
    if (n >= 1 && n <= tabs.length) location.hash = `#/sandboxes/${id}/${tabs[n - 1]}`;
  };
  document.addEventListener("keydown", keys);
  signal.addEventListener("abort", () => { document.removeEventListener("keydown", keys); clearTimeout(timer); });

  if (tab === "terminal") openTerminal(body, id, signal);
  else if (tab === "files") await filesView(body, id, sb.workdir || "/", signal);
  else if (tab === "logs") await logsView(body, id, signal);
  else await overview(body, () => sb, timeline, signal);
}

async function overview(body: HTMLElement, sb: () => Sandbox, timeline: HTMLElement, signal: AbortSignal) {
  const s = sb();
  const row = (k: string, v: any) => (v === undefined || v === "" || v === null ? null : h("tr", {}, h("th", {}, k), h("td", {}, v)));
  const details = h("table", { class: "kv" },
    row("ID", h("span", { class: "mono" }, s.id)), row("Class", s.class), row("Image", s.image), row("Snapshot", s.snapshot),
    row("Limits", `${s.cpu || "–"} CPU · ${s.memoryMiB ? s.memoryMiB + " MiB" : "–"} · disk ${s.diskMiB ? s.diskMiB + " MiB" : "shared"}`),
    row("Labels", labelsText(s.labels)), row("Network", s.network), row("Created", time(s.createdAt)),
    row("Last activity", ago(s.lastActivityAt)), row("Next", s.expiresAt ? `${s.expiresAction} ${ago(s.expiresAt)}` : "none"));
  const charts = h("div", { class: "charts", id: "charts" });
  const lineage = h("div", { id: "lineage" });
  const ports = h("div", { id: "ports" });
  replace(body,
    h("div", { class: "cols" },
      h("div", {}, h("h3", {}, "Details"), details, h("h3", {}, "Lineage"), lineage, h("h3", {}, "Ports"), ports),
      h("div", {}, h("h3", {}, "Usage, up to the last hour"), charts, h("h3", {}, "Timeline"), timeline)));

  const drawCharts = async () => {
    const st = await ui<{ samples: Sample[]; everySeconds: number }>(`/ui/stats/${enc(s.id)}`).catch(() => ({ samples: [] as Sample[], everySeconds: 10 }));
    replace(charts,
      lineChart("CPU", st.samples.map((p) => ({ t: p.t, v: p.cpu })), (v) => `${v.toFixed(1)}%`, 3600, 5),
      lineChart("Memory", st.samples.map((p) => ({ t: p.t, v: p.mem })), bytes, 3600, 1 << 20));
    return st.everySeconds;
  };
  const every = await drawCharts();
  const iv = window.setInterval(() => drawCharts().catch(() => {}), Math.max(every, 5) * 1000);
  signal.addEventListener("abort", () => clearInterval(iv));

  // Lineage: parent, ancestors' origin, forks.
  const link = (x: Sandbox) => h("a", { href: `#/sandboxes/${x.id}` }, x.name || x.id);
  const [parent, forks] = await Promise.all([
    api<Sandbox>("GET", `/v1/sandboxes/${enc(s.id)}/parent`).catch(() => null),
    api<Sandbox[]>("GET", `/v1/sandboxes/${enc(s.id)}/forks`).catch(() => [] as Sandbox[]),
  ]);
  replace(lineage, h("p", {}, "Parent: ", parent ? link(parent) : h("span", { class: "muted" }, s.snapshot ? `snapshot ${s.snapshot}` : "none")),
    h("p", {}, "Forks: ", forks.length ? forks.map((f, i) => [i ? ", " : "", link(f)]) : h("span", { class: "muted" }, "none")));

  const drawPorts = async () => {
    const list = await api<any[]>("GET", `/v1/sandboxes/${enc(s.id)}/ports`).catch(() => []);
    const portIn = h("input", { type: "number", min: 1, max: 65535, placeholder: "port", "aria-label": "port to expose" });
    const form = h("form", { class: "inline" }, portIn, h("label", { class: "small" }, h("input", { type: "checkbox", name: "public" }), " public"), h("button", {}, "Expose"));
    form.addEventListener("submit", async (e) => {
      e.preventDefault();
      try {
        await api("POST", `/v1/sandboxes/${enc(s.id)}/ports`, { port: Number(portIn.value), public: (form.querySelector("[name=public]") as HTMLInputElement).checked });
        drawPorts();
      } catch (err: any) { toast(err.message, true); }
    });
    replace(ports, list.length ? h("ul", { class: "plain" }, list.map((p) => h("li", {},
      h("a", { href: p.public ? p.url : `${p.url}?sbx_token=${enc(p.token)}`, target: "_blank", rel: "noopener noreferrer" }, `:${p.port} ↗`),
      h("span", { class: "muted small" }, p.public ? " public" : " private"),
      h("button", { class: "ghost small", onclick: async () => { await api("DELETE", `/v1/sandboxes/${enc(s.id)}/ports/${p.port}`).catch((e) => toast(e.message, true)); drawPorts(); } }, "remove")))) : h("p", { class: "muted" }, "No exposed ports."), form);
  };
  await drawPorts();
}

function b64(s: string): Uint8Array {
  const bin = atob(s);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

// logsView follows the main process's output or a background process's.
async function logsView(body: HTMLElement, id: string, signal: AbortSignal) {
  const procs = await api<any[]>("GET", `/v1/sandboxes/${enc(id)}/processes`).catch(() => [] as any[]);
  const pick = h("select", { "aria-label": "which output" }, h("option", { value: "" }, "main process"),
    ...procs.map((p) => h("option", { value: p.id }, `${p.id}: ${p.cmd.join(" ").slice(0, 60)} (${p.state})`)));
  const pre = h("pre", { class: "logs", id: "logs", tabindex: 0 });
  replace(body, h("div", { class: "bar" }, h("h3", {}, "Logs"), pick, h("span", { class: "muted small" }, "following")), pre);
  const dec = new TextDecoder();
  let ctl = new AbortController();
  const start = () => {
    ctl.abort();
    ctl = new AbortController();
    signal.addEventListener("abort", () => ctl.abort());
    pre.textContent = "";
    const stick = () => pre.scrollHeight - pre.scrollTop - pre.clientHeight < 40;
    const add = (data: string) => {
      const atEnd = stick();
      pre.append(dec.decode(b64(data), { stream: true }));
      if (atEnd) pre.scrollTop = pre.scrollHeight;
    };
    const proc = pick.value;
    let offset = 0;
    // The main log has no offset: each (re)connect replays it whole.
    followForever(() => proc ? `/v1/sandboxes/${enc(id)}/processes/${enc(proc)}/logs?follow=true&offset=${offset}` : ((pre.textContent = ""), `/v1/sandboxes/${enc(id)}/logs?follow=true`),
      (line) => {
        if (line.data && (line.type === "data" || line.type === "stdout" || line.type === "stderr")) { add(line.data); if (line.seq) offset = line.seq; }
      }, ctl.signal);
  };
  pick.addEventListener("change", start);
  start();
}
