// System: version, doctor, capacity, webhooks (admin keys).
import { h, replace, bytes, time } from "./dom";
import { ui, APIError } from "./api";

export async function systemPage(main: HTMLElement, signal: AbortSignal) {
  const box = h("div", {});
  replace(main, h("div", { class: "bar" }, h("h2", {}, "System")), box);
  const load = async () => {
    let s: any;
    try {
      s = await ui("/ui/system");
    } catch (e) {
      if (e instanceof APIError && e.status === 403) { replace(box, h("p", { class: "muted" }, "The System page needs an admin key.")); return; }
      throw e;
    }
    const meter = (used: number, total: number) => h("meter", { min: 0, max: total || 1, value: used, high: total * 0.85, optimum: 0 });
    const c = s.capacity;
    const memUsed = c.memoryBytes - c.memoryAvailableBytes;
    const diskUsed = c.diskBytes - c.diskFreeBytes;
    const v = s.version;
    replace(box, h("div", { class: "cols" },
      h("div", {},
        h("h3", {}, "Version"),
        h("table", { class: "kv", id: "version" },
          h("tr", {}, h("th", {}, "sbx"), h("td", { class: "mono" }, v.version, v.commit ? ` (${v.commit.slice(0, 12)}${v.modified ? ", modified" : ""})` : "")),
          h("tr", {}, h("th", {}, "Go"), h("td", {}, v.go)), h("tr", {}, h("th", {}, "runc"), h("td", {}, v.runc)), h("tr", {}, h("th", {}, "runsc"), h("td", {}, v.runsc))),
        h("h3", {}, "Capacity"),
        h("table", { class: "kv", id: "capacity" },
          h("tr", {}, h("th", {}, "Sandboxes"), h("td", {}, Object.entries(c.sandboxes).map(([k, n]) => `${n} ${k}`).join(" · ") || "none")),
          h("tr", {}, h("th", {}, "Memory"), h("td", {}, meter(memUsed, c.memoryBytes), ` ${bytes(memUsed)} of ${bytes(c.memoryBytes)}`)),
          h("tr", {}, h("th", {}, "Disk"), h("td", {}, meter(diskUsed, c.diskBytes), ` ${bytes(diskUsed)} of ${bytes(c.diskBytes)}`))),
        h("h3", {}, "Webhooks"),
        h("table", { class: "kv", id: "webhooks" },
          h("tr", {}, h("th", {}, "URLs"), h("td", {}, s.webhooks.urls)),
          h("tr", {}, h("th", {}, "Queued"), h("td", {}, s.webhooks.queued)),
          h("tr", {}, h("th", {}, "Dropped"), h("td", {}, s.webhooks.dropped))),
        h("p", { class: "muted small" }, `${s.dashboardSessions} dashboard session(s) · read ${time(s.time)}`)),
      h("div", {},
        h("h3", {}, "Doctor"),
        h("table", { class: "list doctor", id: "doctor" }, h("tbody", {}, s.doctor.map((r: any) => h("tr", {},
          h("td", {}, h("span", { class: `state doctor-${r.status}` }, r.status)), h("td", {}, r.check),
          h("td", { class: "small" }, r.detail, r.fix ? h("div", { class: "muted" }, "Fix: ", r.fix) : null))))))));
  };
  await load();
  const iv = window.setInterval(() => load().catch(() => {}), 15000);
  signal.addEventListener("abort", () => clearInterval(iv));
}
