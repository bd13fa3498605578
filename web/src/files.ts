// A file browser of a running sandbox: list, upload, download, delete and
// a preview of text and images.
import { h, replace, bytes, time, confirmDialog, toast } from "./dom";
import { api, raw, enc } from "./api";

interface FileInfo { name: string; path: string; type: string; size: number; mode: string; modTime: string; target?: string }

const imageTypes: Record<string, string> = { png: "image/png", jpg: "image/jpeg", jpeg: "image/jpeg", gif: "image/gif", svg: "image/svg+xml", webp: "image/webp" };
const previewMax = 512 << 10;

export async function filesView(body: HTMLElement, id: string, start: string, signal: AbortSignal) {
  let dir = sessionStorage.getItem(`sbx-dir-${id}`) || start;
  const crumbs = h("div", { class: "crumbs", id: "crumbs" });
  const tbody = h("tbody", {});
  const preview = h("div", { class: "preview", id: "preview" });
  const upload = h("input", { type: "file", id: "upload", multiple: true, "aria-label": "upload files" });
  const progress = h("span", { class: "muted small", id: "upload-status" });
  replace(body,
    h("div", { class: "bar" }, h("h3", {}, "Files"), crumbs, h("span", { class: "spacer" }),
      h("label", { class: "button" }, "Upload…", upload), progress),
    h("div", { class: "cols files-cols" },
      h("div", { class: "scroll" }, h("table", { class: "list files" },
        h("thead", {}, h("tr", {}, h("th", {}, "Name"), h("th", { class: "num" }, "Size"), h("th", {}, "Mode"), h("th", {}, "Modified"), h("th", {}, ""))), tbody)),
      preview));
  const base = `/v1/sandboxes/${enc(id)}/files`;
  let objectURL = "";
  signal.addEventListener("abort", () => objectURL && URL.revokeObjectURL(objectURL));

  const join = (d: string, n: string) => (d.endsWith("/") ? d + n : `${d}/${n}`);
  const list = async () => {
    sessionStorage.setItem(`sbx-dir-${id}`, dir);
    const parts = dir.split("/").filter(Boolean);
    replace(crumbs, h("a", { href: "#", onclick: (e: Event) => { e.preventDefault(); dir = "/"; list(); } }, "/"),
      parts.map((p, i) => [h("a", { href: "#", onclick: (e: Event) => { e.preventDefault(); dir = "/" + parts.slice(0, i + 1).join("/"); list(); } }, p), "/"]));
    let entries: FileInfo[];
    try {
      entries = await api<FileInfo[]>("GET", `${base}/list?path=${enc(dir)}`);
    } catch (e: any) {
      replace(tbody, h("tr", {}, h("td", { colspan: 5, class: "muted empty" }, e.message)));
      return;
    }
    entries.sort((a, b) => (a.type === "dir" ? 0 : 1) - (b.type === "dir" ? 0 : 1) || a.name.localeCompare(b.name));
    replace(tbody, dir !== "/" ? h("tr", {}, h("td", { colspan: 5 }, h("a", { href: "#", onclick: (e: Event) => { e.preventDefault(); dir = dir.replace(/\/[^/]*\/?$/, "") || "/"; list(); } }, "../"))) : null,
      entries.map((f) => h("tr", { "data-name": f.name },
        h("td", {}, h("a", { href: "#", class: f.type === "dir" ? "dir" : "", onclick: (e: Event) => { e.preventDefault(); if (f.type === "dir") { dir = join(dir, f.name); list(); } else show(f); } }, f.name + (f.type === "dir" ? "/" : "")),
          f.target ? h("span", { class: "muted small" }, ` → ${f.target}`) : null),
        h("td", { class: "num" }, f.type === "file" ? bytes(f.size) : ""),
        h("td", { class: "mono small" }, f.mode),
        h("td", { class: "small" }, time(f.modTime)),
        h("td", { class: "rowactions" },
          f.type === "file" ? h("button", { class: "ghost small", title: "download", onclick: () => download(f) }, "↓") : null,
          h("button", { class: "ghost small danger", title: "delete", "data-action": "delete-file", onclick: () => remove(f) }, "✕")))));
  };

  const fetchBlob = async (f: FileInfo) => (await raw(`/ui/api${base}?path=${enc(f.path)}`)).blob();
  const download = async (f: FileInfo) => {
    try {
      const url = URL.createObjectURL(await fetchBlob(f));
      const a = h("a", { href: url, download: f.name });
      a.click();
      setTimeout(() => URL.revokeObjectURL(url), 10000);
    } catch (e: any) { toast(e.message, true); }
  };
  const remove = async (f: FileInfo) => {
    if (!(await confirmDialog(`Delete ${f.path}${f.type === "dir" ? " and everything in it" : ""}?`, "Delete"))) return;
    try {
      await api("DELETE", `${base}?path=${enc(f.path)}&recursive=${f.type === "dir"}`);
      list();
    } catch (e: any) { toast(e.message, true); }
  };
  const show = async (f: FileInfo) => {
    if (objectURL) { URL.revokeObjectURL(objectURL); objectURL = ""; }
    const ext = f.name.split(".").pop()?.toLowerCase() ?? "";
    if (f.size > previewMax && !imageTypes[ext]) {
      replace(preview, h("h4", {}, f.name), h("p", { class: "muted" }, `${bytes(f.size)}: too large to preview.`), h("button", { onclick: () => download(f) }, "Download"));
      return;
    }
    try {
      const blob = await fetchBlob(f);
      if (imageTypes[ext]) {
        objectURL = URL.createObjectURL(new Blob([blob], { type: imageTypes[ext] }));
        replace(preview, h("h4", {}, f.name), h("img", { src: objectURL, alt: f.name }));
      } else {
        const text = await blob.text();
        const binary = /[\x00-\x08\x0e-\x1f]/.test(text.slice(0, 4096));
        replace(preview, h("h4", {}, f.name), binary ? h("p", { class: "muted" }, "Binary file.") : h("pre", { class: "filetext" }, text));
      }
    } catch (e: any) { toast(e.message, true); }
  };

  upload.addEventListener("change", async () => {
    const files = [...(upload.files ?? [])];
    for (const [i, file] of files.entries()) {
      progress.textContent = `uploading ${file.name} (${i + 1}/${files.length})…`;
      try {
        await raw(`/ui/api${base}?path=${enc(join(dir, file.name))}`, { method: "PUT", body: file });
      } catch (e: any) { toast(`${file.name}: ${e.message}`, true); }
    }
    progress.textContent = files.length ? `uploaded ${files.length}` : "";
    upload.value = "";
    list();
  });
  await list();
}
