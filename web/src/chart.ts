// A small SVG line chart of the last hour: no chart library needed.
import { h } from "./dom";

const NS = "http://www.w3.org/2000/svg";
function s(tag: string, attrs: Record<string, string | number>) {
  const el = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  return el;
}

// lineChart draws points (t in Unix seconds) over the last hour, or over
// the last 5, 10, 15 … minutes while the samples cover less; fmt formats
// values; minMax is the least top of the scale.
export function lineChart(title: string, points: { t: number; v: number }[], fmt: (v: number) => string, maxWindowSec = 3600, minMax = 1) {
  const W = 600, H = 140, pad = 4;
  const now = Date.now() / 1000;
  const span = points.length ? now - points[0].t : 0;
  const windowSec = Math.min(maxWindowSec, Math.max(300, Math.ceil(span / 300) * 300));
  const maxV = Math.max(minMax, ...points.map((p) => p.v)) * 1.1;
  const x = (t: number) => pad + ((t - (now - windowSec)) / windowSec) * (W - 2 * pad);
  const y = (v: number) => H - pad - (v / maxV) * (H - 2 * pad);
  const svg = s("svg", { viewBox: `0 0 ${W} ${H}`, preserveAspectRatio: "none", class: "chart", role: "img", "aria-label": title });
  for (const f of [0.25, 0.5, 0.75]) svg.appendChild(s("line", { x1: 0, x2: W, y1: H * f, y2: H * f, class: "grid" }));
  const pts = points.filter((p) => p.t >= now - windowSec);
  if (pts.length > 1) {
    const d = pts.map((p, i) => `${i ? "L" : "M"}${x(p.t).toFixed(1)},${y(p.v).toFixed(1)}`).join("");
    svg.appendChild(s("path", { d: `${d}L${x(pts[pts.length - 1].t).toFixed(1)},${H - pad}L${x(pts[0].t).toFixed(1)},${H - pad}Z`, class: "area" }));
    svg.appendChild(s("path", { d, class: "line" }));
  }
  const last = pts.length ? fmt(pts[pts.length - 1].v) : "no samples yet";
  const peak = pts.length ? fmt(Math.max(...pts.map((p) => p.v))) : "–";
  const minutes = Math.round(windowSec / 60);
  return h("figure", { class: "chartbox" },
    h("figcaption", {}, h("span", {}, title), h("span", { class: "muted small" }, `now ${last} · peak ${peak}`)),
    svg,
    h("div", { class: "axis muted small" }, h("span", {}, `-${minutes} min`), h("span", {}, `-${minutes / 2}`), h("span", {}, "now")));
}
