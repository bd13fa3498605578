// Command mkoci builds an OCI image archive from Debian packages and
// files, with go-containerregistry, for `docker load` and `ctr import`
// (scripts/build-oci.sh runs it for the sbx host and gateway images):
//
//	go run ./packaging/cmd/mkoci -name ghcr.io/sbxhq/sbx-host:0.1.0 -arch amd64 \
//	    -root runc,nftables -file /usr/local/bin/sbx=bin/sbx -mtime 1700000000 \
//	    -o sbx-host.tar /var/cache/sbx/debs/*.deb
//
// The .deb arguments are a pool: the image gets the -root packages and,
// from the pool, the packages that hold every shared library (and ELF
// interpreter) their programs need, found by reading each ELF file's
// DT_NEEDED, repeated until nothing is missing. A library no package of
// the pool has fails the build, so the image never lacks one. Packages
// are unpacked, their maintainer scripts not run, their documentation
// (but its copyright files) left out.
//
// Reproducible: the Debian layer keeps the packages' own file times, the
// -file layer and the image's creation time are -mtime, entries are
// sorted, owners numeric, gzip without a name or time. The Debian layer
// is cached in -cache under a hash of the pool's bytes and the roots, so
// a second build reads no package.
//
// The archive holds both an OCI image layout (index.json, blobs/) and
// Docker's manifest.json naming the same blobs, as `docker save` writes
// since Docker 25: older `docker load` reads manifest.json, containerd's
// `ctr import` the index, and both name the image -name.
package main

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// layerFormat changes when the Debian layer's bytes would change for the
// same packages (a new rule in tree.go): it is part of the cache key.
const layerFormat = "mkoci-debian-layer-2"

// libDirs are where the dynamic loader of Debian's arches looks for a
// library (its built-in trusted directories).
var libDirs = map[string][]string{
	"amd64": {"lib/x86_64-linux-gnu", "usr/lib/x86_64-linux-gnu", "lib64", "usr/lib64", "lib", "usr/lib"},
	"arm64": {"lib/aarch64-linux-gnu", "usr/lib/aarch64-linux-gnu", "lib64", "usr/lib64", "lib", "usr/lib"},
}

type fileFlag []string

func (f *fileFlag) String() string     { return strings.Join(*f, ",") }
func (f *fileFlag) Set(v string) error { *f = append(*f, v); return nil }

type options struct {
	name, arch, out, cache string
	roots                  []string
	files, labels          []string
	entrypoint, cmd        []string
	mtime                  int64
	debs                   []string
}

func main() {
	var o options
	var roots, entrypoint, cmd string
	var files, labels fileFlag
	flag.StringVar(&o.name, "name", "", "the image's name, registry/repository:tag (what docker load and ctr import call it)")
	flag.StringVar(&o.arch, "arch", "", "architecture: amd64 or arm64 (of the packages and files)")
	flag.StringVar(&o.out, "o", "", "the archive to write")
	flag.StringVar(&o.cache, "cache", "", "directory caching the Debian layer by content (none: no cache)")
	flag.StringVar(&roots, "root", "", "comma-separated Debian packages the image holds (with the libraries they need)")
	flag.Var(&files, "file", "IMAGEPATH=SOURCE: a file of the last layer, mode 0755 (repeatable)")
	flag.Var(&labels, "label", "KEY=VALUE: a label of the image's config (repeatable)")
	flag.StringVar(&entrypoint, "entrypoint", "", "the entrypoint, space-separated")
	flag.StringVar(&cmd, "cmd", "", "the default arguments, space-separated")
	flag.Int64Var(&o.mtime, "mtime", 0, "time of the files and the image, in seconds since 1970 (the commit's time)")
	flag.Parse()
	if roots != "" {
		o.roots = strings.Split(roots, ",")
	}
	o.files, o.labels = files, labels
	o.entrypoint, o.cmd = strings.Fields(entrypoint), strings.Fields(cmd)
	o.debs = flag.Args()
	digest, err := build(o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "mkoci:", err)
		os.Exit(1)
	}
	fmt.Println(digest)
}

// build writes the archive and returns the image's manifest digest.
func build(o options) (string, error) {
	switch {
	case o.name == "" || o.out == "":
		return "", fmt.Errorf("-name and -o are required")
	case libDirs[o.arch] == nil:
		return "", fmt.Errorf("-arch must be amd64 or arm64, got %q", o.arch)
	case o.mtime <= 0:
		return "", fmt.Errorf("-mtime is required (seconds since 1970, e.g. the commit's time)")
	case len(o.roots) > 0 && len(o.debs) == 0:
		return "", fmt.Errorf("-root %s needs .deb files to take them from", strings.Join(o.roots, ","))
	}
	mtime := time.Unix(o.mtime, 0).UTC()
	var layers []mutate.Addendum
	if len(o.roots) > 0 {
		l, err := debianLayer(o)
		if err != nil {
			return "", err
		}
		layers = append(layers, mutate.Addendum{Layer: l, MediaType: types.OCILayer,
			History: v1.History{Created: v1.Time{Time: mtime}, CreatedBy: "mkoci: Debian packages " + strings.Join(o.roots, " ") + " and their libraries"}})
	}
	files := tree{"tmp": {hdr: tar.Header{Typeflag: tar.TypeDir, Name: "tmp", Mode: 0o1777, ModTime: mtime}}}
	var names []string
	for _, f := range o.files {
		dst, src, ok := strings.Cut(f, "=")
		if !ok || !path.IsAbs(dst) {
			return "", fmt.Errorf("-file %q: want /IMAGE/PATH=SOURCE", f)
		}
		body, err := os.ReadFile(src)
		if err != nil {
			return "", err
		}
		files.add(entry{hdr: tar.Header{Typeflag: tar.TypeReg, Name: strings.TrimPrefix(path.Clean(dst), "/"), Mode: 0o755, ModTime: mtime}, body: body})
		names = append(names, dst)
	}
	if err := files.fill(mtime); err != nil {
		return "", err
	}
	var buf bytes.Buffer
	if err := files.writeLayer(&buf); err != nil {
		return "", err
	}
	l, err := tarball.LayerFromReader(bytes.NewReader(buf.Bytes()))
	if err != nil {
		return "", err
	}
	layers = append(layers, mutate.Addendum{Layer: l, MediaType: types.OCILayer,
		History: v1.History{Created: v1.Time{Time: mtime}, CreatedBy: "mkoci: " + strings.Join(names, " ")}})

	cfg := &v1.ConfigFile{
		Architecture: o.arch,
		OS:           "linux",
		Created:      v1.Time{Time: mtime},
		RootFS:       v1.RootFS{Type: "layers"},
		Config: v1.Config{
			Env:        []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"},
			Entrypoint: o.entrypoint,
			Cmd:        o.cmd,
			Labels:     map[string]string{},
		},
	}
	for _, kv := range o.labels {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return "", fmt.Errorf("-label %q: want KEY=VALUE", kv)
		}
		cfg.Config.Labels[k] = v
	}
	img, err := mutate.ConfigFile(mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON), cfg)
	if err != nil {
		return "", err
	}
	if img, err = mutate.Append(img, layers...); err != nil {
		return "", err
	}
	if err := writeArchive(o.out, o.name, o.arch, img, mtime); err != nil {
		return "", err
	}
	d, err := img.Digest()
	return d.String(), err
}

// debianLayer is the layer of the -root packages and the libraries they
// need, from the cache when the same pool and roots built it before.
func debianLayer(o options) (v1.Layer, error) {
	debs := append([]string(nil), o.debs...)
	sort.Strings(debs)
	h := sha256.New()
	fmt.Fprintf(h, "%s\n%s\n%s\n", layerFormat, o.arch, strings.Join(o.roots, ","))
	for _, d := range debs {
		b, err := os.ReadFile(d)
		if err != nil {
			return nil, err
		}
		sum := sha256.Sum256(b)
		fmt.Fprintf(h, "%x\n", sum)
	}
	key := hex.EncodeToString(h.Sum(nil))[:16]
	cached := ""
	if o.cache != "" {
		cached = filepath.Join(o.cache, "debian-layer-"+key+".tar.gz")
		if _, err := os.Stat(cached); err == nil {
			fmt.Fprintf(os.Stderr, "mkoci: Debian layer cached: %s\n", cached)
			return tarball.LayerFromFile(cached)
		}
	}
	t, err := resolvePackages(o.roots, debs, libDirs[o.arch])
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := t.writeLayer(&buf); err != nil {
		return nil, err
	}
	if cached != "" {
		if err := os.MkdirAll(o.cache, 0o755); err != nil {
			return nil, err
		}
		tmp := cached + ".tmp"
		if err := os.WriteFile(tmp, buf.Bytes(), 0o644); err != nil {
			return nil, err
		}
		if err := os.Rename(tmp, cached); err != nil {
			return nil, err
		}
	}
	return tarball.LayerFromReader(bytes.NewReader(buf.Bytes()))
}

// resolvePackages unpacks roots and, from the pool, the packages holding
// what their ELF files need, until nothing is missing.
func resolvePackages(roots, pool []string, dirs []string) (tree, error) {
	byName := map[string]*deb{}
	for _, f := range pool {
		d, err := readDeb(f)
		if err != nil {
			return nil, err
		}
		if old, ok := byName[d.name]; ok {
			return nil, fmt.Errorf("package %s is given twice: %s and %s", d.name, old.file, d.file)
		}
		byName[d.name] = d
	}
	pkgNames := make([]string, 0, len(byName))
	for n := range byName {
		pkgNames = append(pkgNames, n)
	}
	sort.Strings(pkgNames)
	chosen := map[string]bool{}
	for _, r := range roots {
		if byName[r] == nil {
			return nil, fmt.Errorf("-root %s: no .deb of that package is given", r)
		}
		chosen[r] = true
	}
	for {
		t := tree{}
		for _, n := range pkgNames {
			if chosen[n] {
				for _, e := range byName[n].entries {
					t.add(e)
				}
			}
		}
		if err := t.fill(time.Unix(0, 0).UTC()); err != nil {
			return nil, err
		}
		missing, err := t.missing(dirs)
		if err != nil {
			return nil, err
		}
		if len(missing) == 0 {
			var list []string
			for _, n := range pkgNames {
				if chosen[n] {
					list = append(list, n)
				}
			}
			fmt.Fprintf(os.Stderr, "mkoci: packages: %s\n", strings.Join(list, " "))
			return t, nil
		}
		added := false
		var unmet []string
		for need, by := range missing {
			p := provider(need, pkgNames, byName, dirs)
			if p == "" {
				sort.Strings(by)
				unmet = append(unmet, need+" (needed by /"+by[0]+")")
				continue
			}
			added = added || !chosen[p]
			chosen[p] = true
		}
		if len(unmet) > 0 {
			sort.Strings(unmet)
			return nil, fmt.Errorf("no given package has %s", strings.Join(unmet, ", "))
		}
		if !added {
			return nil, fmt.Errorf("still missing after adding their packages: %v", missing)
		}
	}
}

// provider is the first package (in name order) that has need: the path
// itself, or a file of that name in a library directory.
func provider(need string, pkgNames []string, byName map[string]*deb, dirs []string) string {
	for _, n := range pkgNames {
		t := tree{}
		for _, e := range byName[n].entries {
			t.add(e)
		}
		if strings.Contains(need, "/") {
			if _, ok := t[strings.TrimPrefix(path.Clean(need), "/")]; ok {
				return n
			}
			continue
		}
		for _, d := range dirs {
			if _, ok := t[path.Join(d, need)]; ok {
				return n
			}
		}
	}
	return ""
}
