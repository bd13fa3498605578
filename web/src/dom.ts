// A few DOM helpers: the dashboard needs no framework.

type Attrs = Record<string, string | number | boolean | EventListener | undefined>;
type Child = Node | string | number | null | undefined | false | Child[];

// h makes an element: h("button", {class: "x", onclick: f}, "text").
export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Attrs = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === false) continue;
    if (k.startsWith("on") && typeof v === "function") el.addEventListener(k.slice(2), v as EventListener);
    else el.setAttribute(k, v === true ? "" : String(v));
  }
  append(el, children);
  return el;
}

function append(el: Node, children: Child[]) {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else el.appendChild(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

// replace swaps el's children for children.
export function replace(el: Element, ...children: Child[]) {
  el.replaceChildren();
  append(el, children);
}

export function bytes(n: number): string {
  if (!n) return "0";
  const u = ["B", "KiB", "MiB", "GiB", "TiB"];
  let i = 0;
  while (n >= 1024 && i < u.length - 1) { n /= 1024; i++; }
  return `${n < 10 && i > 0 ? n.toFixed(1) : Math.round(n)} ${u[i]}`;
}

// ago is a short relative time: "12s ago", "in 5m".
export function ago(iso?: string): string {
  if (!iso) return "";
  const d = (Date.parse(iso) - Date.now()) / 1000;
  const a = Math.abs(d);
  const s = a < 60 ? `${Math.round(a)}s` : a < 3600 ? `${Math.round(a / 60)}m` : a < 86400 ? `${Math.round(a / 3600)}h` : `${Math.round(a / 86400)}d`;
  return d < 0 ? `${s} ago` : `in ${s}`;
}

export function time(iso?: string): string {
  return iso ? new Date(iso).toLocaleString() : "";
}

// confirmDialog asks before a destructive action; resolves true on OK.
export function confirmDialog(message: string, ok = "Confirm"): Promise<boolean> {
  return new Promise((resolve) => {
    const dlg = h("dialog", { id: "confirm", class: "confirm" },
      h("form", { method: "dialog" },
        h("p", {}, message),
        h("div", { class: "buttons" },
          h("button", { value: "cancel", id: "confirm-cancel" }, "Cancel"),
          h("button", { value: "ok", id: "confirm-ok", class: "danger" }, ok))));
    document.body.appendChild(dlg);
    dlg.addEventListener("close", () => { resolve(dlg.returnValue === "ok"); dlg.remove(); });
    dlg.showModal();
    (dlg.querySelector("#confirm-ok") as HTMLButtonElement).focus();
  });
}

let toastTimer = 0;
// toast shows a short message (an error, or what just happened).
export function toast(msg: string, error = false) {
  let el = document.getElementById("toast");
  if (!el) { el = h("div", { id: "toast", role: "status" }); document.body.appendChild(el); }
  el.textContent = msg;
  el.className = error ? "error show" : "show";
  clearTimeout(toastTimer);
  toastTimer = window.setTimeout(() => { el!.className = ""; }, error ? 8000 : 3000);
}
