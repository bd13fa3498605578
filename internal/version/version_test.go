package version

import (
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"
)

// semver 2.0.0's grammar, without build metadata (a release has none).
var semverRe = regexp.MustCompile(`^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?$`)

func TestVersionIsSemver(t *testing.T) {
	if !semverRe.MatchString(Version) {
		t.Fatalf("Version %q is not semver", Version)
	}
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestEverythingFollowsVersion: the committed API document and both SDKs'
// package versions are Version (internal/api's TestOpenAPI keeps
// sdks/openapi.json equal to the document the server serves).
func TestEverythingFollowsVersion(t *testing.T) {
	var doc struct {
		Info struct{ Version string } `json:"info"`
	}
	if err := json.Unmarshal([]byte(read(t, "../../sdks/openapi.json")), &doc); err != nil {
		t.Fatal(err)
	}
	var pkg, lock struct{ Name, Version string }
	if err := json.Unmarshal([]byte(read(t, "../../sdks/typescript/package.json")), &pkg); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(read(t, "../../sdks/typescript/package-lock.json")), &lock); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{
		"sdks/openapi.json info.version":              doc.Info.Version,
		"sdks/typescript/package.json version":        pkg.Version,
		"sdks/typescript/package-lock.json version":   lock.Version,
		"sdks/python/pyproject.toml version":          field(t, "../../sdks/python/pyproject.toml", `(?m)^version = "([^"]*)"`),
		"sdks/python/src/sbx/__init__.py __version__": field(t, "../../sdks/python/src/sbx/__init__.py", `(?m)^__version__ = "([^"]*)"`),
	}
	for where, v := range got {
		if v != Version {
			t.Errorf("%s = %q, want %q (internal/version)", where, v, Version)
		}
	}
}

func field(t *testing.T, path, re string) string {
	t.Helper()
	m := regexp.MustCompile(re).FindStringSubmatch(read(t, path))
	if m == nil {
		t.Fatalf("%s: no match for %s", path, re)
	}
	return m[1]
}

// TestChangelog: CHANGELOG.md is in Keep a Changelog form, with an
// Unreleased section first and a semver section per release.
func TestChangelog(t *testing.T) {
	log := read(t, "../../CHANGELOG.md")
	if !strings.Contains(log, "https://keepachangelog.com/en/1.1.0/") || !strings.Contains(log, "https://semver.org/spec/v2.0.0.html") {
		t.Error("CHANGELOG.md does not say it follows Keep a Changelog and semver")
	}
	sections := regexp.MustCompile(`(?m)^## \[([^\]]+)\]`).FindAllStringSubmatch(log, -1)
	if len(sections) == 0 || sections[0][1] != "Unreleased" {
		t.Fatalf("CHANGELOG.md: first section is not ## [Unreleased]: %v", sections)
	}
	for _, s := range sections[1:] {
		if !semverRe.MatchString(s[1]) {
			t.Errorf("CHANGELOG.md section %q is not a semver", s[1])
		}
	}
}
