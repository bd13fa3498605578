package integration

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// buildDocsSite runs mkdocs build --strict of the repository's mkdocs.yml
// into a temporary directory and returns it.
func buildDocsSite(t *testing.T) string {
	t.Helper()
	site := t.TempDir()
	cmd := exec.Command("mkdocs", "build", "--strict", "--site-dir", site)
	cmd.Dir = repoRoot(t)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("mkdocs build --strict: %v\n%s", err, out)
	}
	return site
}

// TestDocsSiteAPIReference builds the documentation site and opens its API
// reference in Chromium: Redoc renders every operation of the OpenAPI
// document, and the page loads nothing from anywhere but the site.
func TestDocsSiteAPIReference(t *testing.T) {
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatal("the docs site test needs Debian's chromium: scripts/setup-tests.sh installs it")
	}
	site := buildDocsSite(t)
	srv := httptest.NewServer(http.FileServer(http.Dir(site)))
	t.Cleanup(srv.Close)

	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	b, err := os.ReadFile(filepath.Join(site, "api", "openapi.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	ops := 0
	for _, item := range doc.Paths {
		for method := range item {
			switch method {
			case "get", "put", "post", "delete", "patch", "head", "options":
				ops++
			}
		}
	}

	ctx, cancel := newBrowser(t, chromium)
	defer cancel()
	var mu sync.Mutex
	var foreign []string // requests to anywhere but the site
	if err := chromedp.Listen(ctx, func(ev any) {
		if e, ok := ev.(*network.EventRequestWillBeSent); ok {
			u := e.Request.URL
			if !strings.HasPrefix(u, srv.URL+"/") && !strings.HasPrefix(u, "data:") && !strings.HasPrefix(u, "blob:") {
				mu.Lock()
				foreign = append(foreign, u)
				mu.Unlock()
			}
		}
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(ctx, network.Enable, network.EnableParams{}); err != nil {
		t.Fatal(err)
	}
	actx, cancelA := context.WithTimeout(ctx, 2*time.Minute)
	defer cancelA()
	if err := chromedp.Do(actx, chromedp.Navigate(srv.URL+"/api/"),
		chromedp.WaitVisible(chromedp.CSS(`[data-section-id^="operation/"]`))); err != nil {
		t.Fatalf("open the API reference: %v", err)
	}
	n, err := chromedp.Run(ctx, chromedp.Evaluate[float64](
		`new Set([...document.querySelectorAll('[data-section-id^="operation/"]')].map(e => e.getAttribute("data-section-id"))).size`))
	if err != nil {
		t.Fatal(err)
	}
	rendered := int(n)
	if rendered != ops || ops == 0 {
		t.Errorf("Redoc rendered %d operations; the OpenAPI document has %d", rendered, ops)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(foreign) > 0 {
		t.Errorf("the API reference loaded from outside the site: %v", foreign)
	}
}

// TestDocsSiteStrictLinks checks the site's link checks
// (scripts/docs/mkdocs_hooks.py) on a page of its own: a link out of docs/
// to a file the repository has builds, and becomes a forge link; one to a
// missing file, and one to a heading the target page lacks, fail the build
// by name.
func TestDocsSiteStrictLinks(t *testing.T) {
	root := repoRoot(t)
	dir := t.TempDir()
	docs := filepath.Join(dir, "docs")
	os.MkdirAll(docs, 0o755)
	write := func(name, s string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	config := "site_name: t\nrepo_url: https://github.com/sbxhq/sbx\ndocs_dir: docs\n" +
		"hooks: [" + filepath.Join(root, "scripts/docs/mkdocs_hooks.py") + "]\n" +
		"markdown_extensions:\n  - toc:\n      slugify: !!python/object/apply:pymdownx.slugs.slugify {kwds: {case: lower}}\n"
	write("mkdocs.yml", config)
	write("docs/other.md", "# Other\n\n## A heading: here\n")
	build := func() (string, error) {
		cmd := exec.Command("mkdocs", "build", "--strict", "--site-dir", filepath.Join(dir, "site"))
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		return string(out), err
	}

	write("docs/index.md", "# Home\n\n[benchmarks](../BENCHMARKS.md), [a heading](other.md#a-heading-here)\n")
	if out, err := build(); err != nil {
		t.Fatalf("good links: %v\n%s", err, out)
	}
	page, err := os.ReadFile(filepath.Join(dir, "site", "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(page), `href="https://github.com/sbxhq/sbx/blob/main/BENCHMARKS.md"`) {
		t.Error("the link to ../BENCHMARKS.md is not a forge link in the built page")
	}

	write("docs/index.md", "# Home\n\n[gone](../NO-SUCH-FILE.md), [no heading](other.md#not-there), [here](#nowhere)\n")
	out, err := build()
	if err == nil {
		t.Fatalf("broken links built:\n%s", out)
	}
	for _, want := range []string{"NO-SUCH-FILE.md does not exist", "other.md#not-there", "index.md#nowhere"} {
		if !strings.Contains(out, want) {
			t.Errorf("mkdocs output does not name %q:\n%s", want, out)
		}
	}
}
