"""mkdocs hooks of sbx's documentation site (mkdocs.yml names this file).

The pages under docs/ are plain Markdown that must also read well on a forge,
so they link to files outside docs/ (../BENCHMARKS.md, ../examples/grader/)
by relative path. mkdocs cannot serve those, so here:

- a link that leaves docs/ is checked against the repository and rewritten to
  the file's address on the forge (repo_url); a missing target is a warning,
  which fails `mkdocs build --strict`;
- a link to a heading (page.md#anchor, #anchor) is checked against the ids of
  the rendered target page: mkdocs 1.4 checks only that the page exists;
- the README's links, to files and to headings of docs/ pages, are checked too;
- the API reference (docs/api/index.html, Redoc) gets its script and the
  OpenAPI document copied into the site: Redoc's standalone bundle from the
  npm tree pinned in scripts/docs/package-lock.json (./scripts/npm-install.sh
  scripts/docs installs it), its one remote URL taken out, and
  sdks/openapi.json.
"""

import logging
import os
import posixpath
import re

from mkdocs.structure.files import File

log = logging.getLogger("mkdocs.hooks.sbx")

REPO = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", ".."))
BRANCH = "main"  # the branch the forge links of the built site point at
REDOC = os.path.join(REPO, "scripts/docs/node_modules/redoc/bundles/redoc.standalone.js")
COPIED = {  # site path: source in the repository
    "api/openapi.json": os.path.join(REPO, "sdks/openapi.json"),
}
# The one thing Redoc's bundle fetches from elsewhere, the logo of its "API
# docs by Redocly" link: an image that fails to load is left out, so the
# site loads nothing from outside (integration/docs_site_test.go checks).
REDOC_REMOTE = {"https://cdn.redoc.ly/redoc/logo-mini.svg": "data:,"}

LINK = re.compile(r"(!?\[[^\]]*\]\()([^)\s]+)(\))")
FENCE = re.compile(r"^\s*(```|~~~)")
ID = re.compile(r'\sid="([^"]+)"')

links = []  # (page src_uri, target src_uri, anchor): checked in on_env
ids = {}  # page src_uri -> ids in its rendered HTML


def on_files(files, config):
    for dest, src in COPIED.items():
        if not os.path.isfile(src):
            log.warning(f"{src} is missing")
            continue
        f = File(dest, config["docs_dir"], config["site_dir"], config["use_directory_urls"])
        f.abs_src_path = src
        files.append(f)
    return files


def forge_url(config, path):
    kind = "tree" if os.path.isdir(os.path.join(REPO, path)) else "blob"
    return f"{config['repo_url'].rstrip('/')}/{kind}/{BRANCH}/{path}"


def rewrite(target, page, config):
    if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith("/"):
        return target  # a URL or a site-absolute path
    path, _, anchor = target.partition("#")
    src = page.file.src_uri
    if not path:  # #anchor on this page
        links.append((src, src, anchor))
        return target
    docs_rel = posixpath.normpath(posixpath.join(posixpath.dirname(src), path))
    if docs_rel.startswith("../"):  # leaves docs/: a file of the repository
        repo_rel = posixpath.normpath(posixpath.join("docs", docs_rel))
        if not os.path.exists(os.path.join(REPO, repo_rel)):
            log.warning(f"Documentation file '{src}' links to '{target}': {repo_rel} does not exist in the repository")
            return target
        return forge_url(config, repo_rel) + ("#" + anchor if anchor else "")
    if anchor and docs_rel.endswith(".md"):
        links.append((src, docs_rel, anchor))
    return target


def prose(markdown):
    """Splits markdown into (text, fenced) runs of lines, so that a link
    whose text wraps onto the next line is seen whole and code is left alone."""
    runs, cur, fenced = [], [], False
    for line in markdown.split("\n"):
        if FENCE.match(line) and not fenced:
            runs.append(("\n".join(cur), False))
            cur, fenced = [line], True
        elif FENCE.match(line) and fenced:
            cur.append(line)
            runs.append(("\n".join(cur), True))
            cur, fenced = [], False
        else:
            cur.append(line)
    runs.append(("\n".join(cur), fenced))
    return runs


def on_page_markdown(markdown, page, config, files):
    sub = lambda m: m.group(1) + rewrite(m.group(2), page, config) + m.group(3)
    return "\n".join(text if fenced else LINK.sub(sub, text) for text, fenced in prose(markdown))


def on_page_content(html, page, config, files):
    ids[page.file.src_uri] = set(ID.findall(html))
    return html


def readme_links():
    """The README's relative links as (target path in the repository, anchor):
    it is the front door, though not a page of the site."""
    out = []
    with open(os.path.join(REPO, "README.md"), encoding="utf-8") as f:
        runs = prose(f.read())
    for text, fenced in runs:
        for m in [] if fenced else LINK.finditer(text):
            target = m.group(2)
            if not re.match(r"^[a-z][a-z0-9+.-]*:", target) and not target.startswith("/"):
                path, _, anchor = target.partition("#")
                out.append((posixpath.normpath(path) if path else "README.md", anchor))
    return out


def on_env(env, config, files):
    for path, anchor in readme_links():
        if not os.path.exists(os.path.join(REPO, path)):
            log.warning(f"README.md links to '{path}', which does not exist")
        elif path.startswith("docs/") and anchor:
            links.append(("../README.md", path[len("docs/"):], anchor))
    for src, target, anchor in links:
        if target not in ids:
            continue  # a missing page is mkdocs' own warning
        if anchor not in ids[target]:
            log.warning(f"Documentation file '{src}' links to '{target}#{anchor}': '{target}' has no heading with that anchor")
    links.clear()
    return env


def on_post_build(config):
    if not os.path.isfile(REDOC):
        log.warning(f"{REDOC} is missing: run ./scripts/npm-install.sh scripts/docs")
        return
    with open(REDOC, encoding="utf-8") as f:
        js = f.read()
    for remote, local in REDOC_REMOTE.items():
        js = js.replace(remote, local)
    dest = os.path.join(config["site_dir"], "api", "redoc.standalone.js")
    os.makedirs(os.path.dirname(dest), exist_ok=True)
    with open(dest, "w", encoding="utf-8") as f:
        f.write(js)
