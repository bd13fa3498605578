// Command mkdeb builds sbx's Debian package from binaries built before
// (scripts/release.sh runs it) with nfpm, so no Debian tooling is needed:
//
//	go run ./packaging/cmd/mkdeb -version 0.1.0 -arch amd64 \
//	    -sbx dist/amd64/sbx -agent dist/amd64/sbx-agent -runsc dist/amd64/runsc -o dist/
//
// Every file and the package itself carry -mtime (release.sh passes the
// commit's time), so one commit gives the same bytes each time.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/goreleaser/nfpm/v2"
	"github.com/goreleaser/nfpm/v2/deb"
	"github.com/goreleaser/nfpm/v2/files"

	"github.com/sbxhq/sbx/internal/runtime"
	"github.com/sbxhq/sbx/packaging"
)

// Where the package puts things: Debian's paths, never /usr/local.
const (
	binDir   = "/usr/bin"
	unitPath = "/lib/systemd/system/sbx.service"
	envPath  = "/etc/sbx/sbx.env"
)

// depends are the programs sbx runs (scripts/setup.sh's first lines say
// which needs what): runc and busybox-static for sandboxes, iproute2 and
// nftables for their networks, e2fsprogs for disk limits and volumes.
var depends = []string{"runc", "nftables", "iproute2", "e2fsprogs", "busybox-static"}

// Maintainer scripts. sbx serve leaves sandboxes running when it stops
// (the unit's KillMode=process), so an upgrade restarts the service
// in place and a removal stops only the daemon.
const (
	postinst = `#!/bin/sh
set -e
if [ "$1" = configure ] && command -v systemctl >/dev/null; then
	if [ -d /run/systemd/system ]; then systemctl daemon-reload; fi
	if [ -z "$2" ]; then
		systemctl enable sbx.service >/dev/null 2>&1 || true
		if [ -d /run/systemd/system ]; then systemctl start sbx.service || true; fi
	elif [ -d /run/systemd/system ]; then
		systemctl try-restart sbx.service || true
	fi
fi
`
	prerm = `#!/bin/sh
set -e
if [ "$1" = remove ] && [ -d /run/systemd/system ]; then
	systemctl stop sbx.service || true
fi
`
	postrm = `#!/bin/sh
set -e
if [ "$1" = remove ] || [ "$1" = purge ]; then
	if command -v systemctl >/dev/null; then systemctl disable sbx.service >/dev/null 2>&1 || true; fi
	if [ -d /run/systemd/system ]; then systemctl daemon-reload || true; fi
fi
`
)

func main() {
	var o options
	flag.StringVar(&o.version, "version", "", "package version (semver, as internal/version)")
	flag.StringVar(&o.arch, "arch", "", "Debian architecture: amd64 or arm64")
	flag.StringVar(&o.sbx, "sbx", "", "the sbx binary")
	flag.StringVar(&o.agent, "agent", "", "the sbx-agent binary")
	flag.StringVar(&o.runsc, "runsc", "", "sbx's runsc binary (optional: without it class gvisor uses Debian's runsc)")
	flag.Int64Var(&o.mtime, "mtime", 0, "time of every file, in seconds since 1970 (the commit's time)")
	flag.StringVar(&o.out, "o", ".", "directory the package is written to")
	flag.Parse()
	path, err := build(o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "mkdeb:", err)
		os.Exit(1)
	}
	fmt.Println(path)
}

type options struct {
	version, arch, sbx, agent, runsc, out string
	mtime                                 int64
}

func build(o options) (string, error) {
	switch {
	case o.version == "":
		return "", fmt.Errorf("-version is required")
	case o.arch != "amd64" && o.arch != "arm64":
		return "", fmt.Errorf("-arch must be amd64 or arm64, got %q", o.arch)
	case o.sbx == "" || o.agent == "":
		return "", fmt.Errorf("-sbx and -agent are required")
	case o.mtime <= 0:
		return "", fmt.Errorf("-mtime is required (seconds since 1970, e.g. the commit's time)")
	}
	unit, err := debUnit()
	if err != nil {
		return "", err
	}
	mtime := time.Unix(o.mtime, 0).UTC()
	tmp, err := os.MkdirTemp("", "mkdeb")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	generated := map[string]string{"sbx.service": unit, "sbx.env": packaging.DefaultEnv}
	for name, body := range generated {
		if err := os.WriteFile(filepath.Join(tmp, name), []byte(body), 0o644); err != nil {
			return "", err
		}
	}
	file := func(src, dst string, mode os.FileMode) *files.Content {
		return &files.Content{Source: src, Destination: dst, FileInfo: &files.ContentFileInfo{Mode: mode, MTime: mtime}}
	}
	contents := files.Contents{
		file(o.sbx, binDir+"/sbx", 0o755),
		file(o.agent, binDir+"/sbx-agent", 0o755),
		file(filepath.Join(tmp, "sbx.service"), unitPath, 0o644),
		file(filepath.Join(tmp, "sbx.env"), envPath, 0o644),
	}
	contents[3].Type = files.TypeConfig // a conffile: dpkg keeps the operator's edits
	if o.runsc != "" {
		contents = append(contents, file(o.runsc, runtime.PackagedRunsc, 0o755))
	}
	scripts := map[string]string{"postinst": postinst, "prerm": prerm, "postrm": postrm}
	for name, body := range scripts {
		if err := os.WriteFile(filepath.Join(tmp, name), []byte(body), 0o755); err != nil {
			return "", err
		}
	}
	info := nfpm.WithDefaults(&nfpm.Info{
		Name:        "sbx",
		Arch:        o.arch,
		Platform:    "linux",
		Version:     o.version,
		Section:     "admin",
		Priority:    "optional",
		Maintainer:  "sbx developers <sbx@sbxhq.dev>",
		Description: "self-hosted sandboxes for code and agents\n sbx serve runs runc and gVisor sandboxes behind an HTTP API,\n with SSH, previews, snapshots and E2B- and Daytona-compatible APIs.",
		Homepage:    "https://github.com/sbxhq/sbx",
		License:     "Apache-2.0",
		MTime:       mtime,
		Overridables: nfpm.Overridables{
			Depends:  depends,
			Contents: contents,
			Scripts: nfpm.Scripts{
				PostInstall: filepath.Join(tmp, "postinst"),
				PreRemove:   filepath.Join(tmp, "prerm"),
				PostRemove:  filepath.Join(tmp, "postrm"),
			},
		},
	})
	if err := nfpm.PrepareForPackager(info, "deb"); err != nil {
		return "", err
	}
	path := filepath.Join(o.out, fmt.Sprintf("sbx_%s_%s.deb", o.version, o.arch))
	var buf bytes.Buffer
	if err := deb.Default.Package(info, &buf); err != nil {
		return "", fmt.Errorf("build the package: %w", err)
	}
	return path, os.WriteFile(path, buf.Bytes(), 0o644)
}

// debUnit is the shipped unit with ExecStart on the package's sbx.
func debUnit() (string, error) {
	const from, to = "ExecStart=/usr/local/bin/sbx serve\n", "ExecStart=" + binDir + "/sbx serve\n"
	if strings.Count(packaging.SystemdUnit, from) != 1 {
		return "", fmt.Errorf("packaging/sbx.service has no single %q line", strings.TrimSpace(from))
	}
	return strings.Replace(packaging.SystemdUnit, from, to, 1), nil
}
