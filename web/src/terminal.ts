// A terminal in the browser over the API's PTY WebSocket
// (GET /v1/sandboxes/{id}/ptys/{pty}/attach): binary frames are the
// terminal's bytes both ways, text frames JSON controls. A dropped socket
// is attached again with the retained output replayed, so a reconnect (or
// a reload: the PTY id is kept per tab) shows what was on screen.
import { Terminal } from "@xterm/xterm";
import { FitAddon } from "@xterm/addon-fit";
import "@xterm/xterm/css/xterm.css";
import { h, replace } from "./dom";
import { api, enc, APIError } from "./api";

const light = { background: "#ffffff", foreground: "#1f2328", cursor: "#1f2328", selectionBackground: "#b6d7ff" };
const dark = { background: "#0d1117", foreground: "#e6edf3", cursor: "#e6edf3", selectionBackground: "#264f78" };
const themeNow = () => (document.documentElement.dataset.theme === "dark" ? dark : light);

export function openTerminal(box: HTMLElement, sandbox: string, signal: AbortSignal) {
  const status = h("span", { class: "muted small", id: "term-status" }, "connecting…");
  const screen = h("div", { class: "term", id: "terminal" });
  const newBtn = h("button", { class: "ghost", title: "end this shell and start a new one" }, "New shell");
  replace(box, h("div", { class: "bar" }, h("h3", {}, "Terminal"), status, h("span", { class: "spacer" }), newBtn), screen);

  const term = new Terminal({ fontFamily: "ui-monospace, SFMono-Regular, Menlo, Consolas, monospace", fontSize: 13, theme: themeNow(), scrollback: 5000 });
  const fit = new FitAddon();
  term.loadAddon(fit);
  term.open(screen);
  fit.fit();
  term.focus();
  const onTheme = () => { term.options.theme = themeNow(); };
  window.addEventListener("sbx-theme", onTheme);

  const storeKey = `sbx-pty-${sandbox}`;
  let pty = sessionStorage.getItem(storeKey) || "";
  let ws: WebSocket | null = null;
  let delay = 250;
  let exited = false;
  const encoder = new TextEncoder();

  const ensurePTY = async () => {
    if (pty) {
      try {
        const p = await api("GET", `/v1/sandboxes/${enc(sandbox)}/ptys/${enc(pty)}`);
        if (p.state === "running") return;
      } catch (e) {
        if (!(e instanceof APIError) || e.status !== 404) throw e;
      }
    }
    const p = await api("POST", `/v1/sandboxes/${enc(sandbox)}/ptys`, { cols: term.cols, rows: term.rows });
    pty = p.id;
    sessionStorage.setItem(storeKey, pty);
  };

  const connect = async () => {
    if (signal.aborted) return;
    try {
      await ensurePTY();
    } catch (e: any) {
      status.textContent = e.message;
      if (e instanceof APIError && e.status === 409) return; // not running: nothing to attach to
      setTimeout(connect, delay = Math.min(delay * 2, 5000));
      return;
    }
    const proto = location.protocol === "https:" ? "wss:" : "ws:";
    const sock = new WebSocket(`${proto}//${location.host}/ui/api/v1/sandboxes/${enc(sandbox)}/ptys/${enc(pty)}/attach?replay=true`);
    sock.binaryType = "arraybuffer";
    ws = sock;
    let first = true;
    sock.onopen = () => {
      status.textContent = "connected";
      status.className = "small ok";
      delay = 250;
      sock.send(JSON.stringify({ type: "resize", cols: term.cols, rows: term.rows }));
    };
    sock.onmessage = (m) => {
      if (typeof m.data === "string") {
        const c = JSON.parse(m.data);
        if (c.type === "exit") { exited = true; status.textContent = `shell exited (${c.exitCode ?? c.signal})`; sessionStorage.removeItem(storeKey); pty = ""; }
        if (c.type === "error") status.textContent = c.error?.message ?? "error";
        return;
      }
      if (first) { term.reset(); first = false; } // the replay repaints the screen
      term.write(new Uint8Array(m.data));
    };
    sock.onclose = () => {
      if (ws !== sock || signal.aborted) return;
      status.className = "small muted";
      if (exited) { status.textContent += " · press Enter for a new shell"; return; }
      status.textContent = "reconnecting…";
      setTimeout(connect, delay = Math.min(delay * 2, 5000));
    };
  };

  term.onData((d) => {
    if (exited) { if (d === "\r") { exited = false; connect(); } return; }
    if (ws?.readyState === WebSocket.OPEN) ws.send(encoder.encode(d));
  });
  term.onResize(({ cols, rows }) => {
    if (ws?.readyState === WebSocket.OPEN) ws.send(JSON.stringify({ type: "resize", cols, rows }));
  });
  const ro = new ResizeObserver(() => { try { fit.fit(); } catch { /* hidden */ } });
  ro.observe(screen);
  newBtn.addEventListener("click", async () => {
    const old = pty;
    pty = ""; sessionStorage.removeItem(storeKey);
    if (old) await api("DELETE", `/v1/sandboxes/${enc(sandbox)}/ptys/${enc(old)}`).catch(() => {});
    exited = false;
    ws?.close();
    ws = null;
    term.reset();
    connect();
  });
  signal.addEventListener("abort", () => {
    ro.disconnect();
    window.removeEventListener("sbx-theme", onTheme);
    const s = ws; ws = null; s?.close(); // detach; the shell keeps running
    term.dispose();
  });
  connect();
}
