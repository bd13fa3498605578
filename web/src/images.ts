// Images and snapshots: list, import (with upload progress), delete.
import { h, replace, bytes, time, confirmDialog, toast } from "./dom";
import { api, enc, csrfToken } from "./api";

export async function imagesPage(main: HTMLElement, signal: AbortSignal) {
  const images = h("tbody", {});
  const snaps = h("tbody", {});
  const nameIn = h("input", { placeholder: "name", required: true, "aria-label": "image name" });
  const fileIn = h("input", { type: "file", required: true, "aria-label": "image tarball" });
  const bar = h("progress", { max: 1, value: 0, hidden: true });
  const status = h("span", { class: "muted small" });
  const form = h("form", { class: "inline" }, nameIn, fileIn, h("button", { class: "primary" }, "Import"), bar, status);
  replace(main,
    h("div", { class: "bar" }, h("h2", {}, "Images")),
    h("details", {}, h("summary", {}, "Import an image (a rootfs tar, OCI layout or docker-save tarball)"), form),
    h("div", { class: "scroll" }, h("table", { class: "list images" }, h("thead", {}, h("tr", {}, ...["Name", "Source", "Layers", "Size", "Created", ""].map((c) => h("th", {}, c)))), images)),
    h("div", { class: "bar" }, h("h2", {}, "Snapshots")),
    h("div", { class: "scroll" }, h("table", { class: "list snapshots" }, h("thead", {}, h("tr", {}, ...["Name", "From", "Class", "Memory", "Size", "Created", "Expires", ""].map((c) => h("th", {}, c)))), snaps)));

  const del = (what: string, path: string) => async () => {
    if (!(await confirmDialog(`Delete ${what}?`, "Delete"))) return;
    try { await api("DELETE", path); load(); } catch (e: any) { toast(e.message, true); }
  };
  const load = async () => {
    const [im, sn] = await Promise.all([api<any[]>("GET", "/v1/images"), api<any[]>("GET", "/v1/snapshots")]);
    replace(images, im.length ? im.map((i) => h("tr", { "data-name": i.name },
      h("td", { class: "mono" }, i.name), h("td", { class: "small" }, i.source), h("td", { class: "num" }, i.layers), h("td", { class: "num" }, bytes(i.sizeBytes)),
      h("td", { class: "small" }, time(i.createdAt)), h("td", {}, i.source === "base" ? null : h("button", { class: "ghost small danger", onclick: del(`image ${i.name}`, `/v1/images/${i.name.split("/").map(enc).join("/")}`) }, "Delete")))) :
      h("tr", {}, h("td", { colspan: 6, class: "muted empty" }, "No images.")));
    replace(snaps, sn.length ? sn.map((s) => h("tr", { "data-name": s.name },
      h("td", { class: "mono" }, s.name), h("td", {}, h("a", { href: `#/sandboxes/${s.sandbox}` }, s.sandbox)), h("td", {}, s.class), h("td", {}, s.memory ? "yes" : "no"),
      h("td", { class: "num" }, bytes(s.sizeBytes)), h("td", { class: "small" }, time(s.createdAt)), h("td", { class: "small" }, s.expiresAt ? time(s.expiresAt) : "never"),
      h("td", {}, h("button", { class: "ghost small danger", onclick: del(`snapshot ${s.name}`, `/v1/snapshots/${enc(s.name)}`) }, "Delete")))) :
      h("tr", {}, h("td", { colspan: 8, class: "muted empty" }, "No snapshots.")));
  };

  // XMLHttpRequest, not fetch: it reports upload progress.
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    const file = fileIn.files?.[0];
    if (!file) return;
    const xhr = new XMLHttpRequest();
    xhr.open("POST", `/ui/api/v1/images/import?name=${enc(nameIn.value)}`);
    xhr.setRequestHeader("X-Sbx-Csrf", csrfToken());
    bar.hidden = false;
    xhr.upload.onprogress = (p) => { bar.value = p.lengthComputable ? p.loaded / p.total : 0; status.textContent = `${bytes(p.loaded)} sent`; };
    xhr.upload.onload = () => { status.textContent = "unpacking…"; };
    xhr.onloadend = () => {
      bar.hidden = true;
      if (xhr.status === 201) { status.textContent = `imported ${nameIn.value}`; form.reset(); load(); }
      else { try { status.textContent = JSON.parse(xhr.responseText).error.message; } catch { status.textContent = `failed (${xhr.status})`; } }
    };
    signal.addEventListener("abort", () => xhr.abort());
    xhr.send(file);
  });
  await load();
}
