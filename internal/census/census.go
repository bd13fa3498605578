// Package census counts what sbx owns on a host: processes, cgroups,
// mounts, loop devices, network links, nftables objects, connection
// tracking entries, user id range claims, files, and the daemon's own fds,
// threads and memory. Two censuses taken around a test, a soak or an
// operator's suspicion show what was left behind (Diff).
//
// A census is scoped to one daemon (its data dir, bridge, subnet and
// sandboxes), so that censuses of several daemons on one host, or of tests
// that run side by side, do not see each other's objects.
package census

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/sbxhq/sbx/internal/runtime"
)

// Scope says which objects are one daemon's.
type Scope struct {
	DataDir string // its data dir: mounts, loop images, files, id range claims
	Bridge  string // its bridge: the link, its veths, and nftables table inet <Bridge>
	Subnet  string // its sandbox subnet (CIDR): connection tracking entries; "": not counted
	PID     int    // the daemon's process; 0: it is not running
	// Sandbox says whether a sandbox id (a cgroup's, a /run/sbx entry's)
	// is the daemon's; nil: every sandbox on the host is.
	Sandbox func(id string) bool
}

// Census is what one scope holds at one moment. Lists name each object;
// counts stand for objects too many or too plain to name.
type Census struct {
	Processes   []string `json:"processes"`   // "pid comm": in a sandbox cgroup, a child of the daemon, or naming or holding the data dir
	Cgroups     []string `json:"cgroups"`     // sandbox cgroup directories
	Mounts      []string `json:"mounts"`      // mount points under the data dir or a sandbox's /run/sbx directory
	FUSE        []string `json:"fuse"`        // FUSE mounts among them (bucket mounts)
	Loops       []string `json:"loops"`       // "loopN file": loop devices backed by a file in the data dir
	Links       []string `json:"links"`       // the bridge and the veths on it
	NftTables   []string `json:"nftTables"`   // "inet <bridge>"
	NftSets     int      `json:"nftSets"`     // sets in those tables
	NftElements int      `json:"nftElements"` // elements in those sets
	Conntrack   int      `json:"conntrack"`   // tracked connections of sandbox addresses (not the gateway's own)
	IDRanges    []string `json:"idRanges"`    // user id range claims held by the scope's sandboxes
	Files       int      `json:"files"`       // files and directories under the data dir
	FDs         int      `json:"fds"`         // the daemon's open files
	Threads     int      `json:"threads"`     // the daemon's threads
	RSSBytes    int64    `json:"rssBytes"`    // the daemon's resident memory
}

// Paths of the host the census reads; variables so tests can point them
// at a fake tree.
var (
	procDir   = "/proc"
	cgroupDir = "/sys/fs/cgroup"
	sysBlock  = "/sys/block"
	runDir    = "/run/sbx"          // internal/userns: per-sandbox dirs
	idRanges  = "/run/sbx/idranges" // internal/userns: claims
	cgroupSub = "sbx"               // internal/runtime/spec.go: cgroupsPath
	v1Ctrls   = []string{"memory", "pids", "cpu", "freezer", "unified"}
)

// Take counts what s holds now. Objects it cannot read (no nft on the
// host, say) count as none.
func Take(s Scope) *Census {
	c := &Census{}
	own := s.Sandbox
	if own == nil {
		own = func(string) bool { return true }
	}
	c.Cgroups = cgroups(own)
	c.Mounts, c.FUSE = mounts(s.DataDir, own)
	c.Loops = loops(s.DataDir)
	c.Processes = processes(s, own)
	if s.Bridge != "" {
		c.Links = links(s.Bridge)
		c.NftTables, c.NftSets, c.NftElements = nftables(s.Bridge)
	}
	if s.Subnet != "" {
		c.Conntrack = conntrack(s.Subnet)
	}
	c.IDRanges = claims(s.DataDir, own)
	c.Files = files(s.DataDir)
	if s.PID > 0 {
		c.FDs, c.Threads, c.RSSBytes = daemonStats(s.PID)
	}
	return c
}

// cgroups lists the sandbox cgroups (v2: <root>/sbx/<id>; v1: one per
// controller) of the scope's sandboxes.
func cgroups(own func(string) bool) []string {
	roots := []string{filepath.Join(cgroupDir, cgroupSub)}
	if _, err := os.Stat(filepath.Join(cgroupDir, "cgroup.controllers")); err != nil {
		roots = nil
		for _, ctrl := range v1Ctrls {
			roots = append(roots, filepath.Join(cgroupDir, ctrl, cgroupSub))
		}
	}
	var out []string
	for _, root := range roots {
		entries, _ := os.ReadDir(root)
		for _, e := range entries {
			if e.IsDir() && own(e.Name()) {
				out = append(out, filepath.Join(root, e.Name()))
			}
		}
	}
	return out
}

// mounts lists the mount points under dataDir and under the scope's
// sandboxes' /run/sbx/<id>, and which of them are FUSE.
func mounts(dataDir string, own func(string) bool) (all, fuse []string) {
	f, err := os.Open(filepath.Join(procDir, "self", "mountinfo"))
	if err != nil {
		return nil, nil
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		// id parent major:minor root mountpoint options ... - fstype source ...
		fields := strings.Fields(sc.Text())
		if len(fields) < 5 {
			continue
		}
		mp := runtime.UnescapeMount(fields[4])
		if !under(mp, dataDir) && !underRun(mp, own) {
			continue
		}
		all = append(all, mp)
		if i := slices.Index(fields, "-"); i > 0 && i+1 < len(fields) && strings.HasPrefix(fields[i+1], "fuse") {
			fuse = append(fuse, mp)
		}
	}
	return all, fuse
}

// underRun reports whether path is in the /run/sbx directory of one of
// the scope's sandboxes.
func underRun(path string, own func(string) bool) bool {
	rest, ok := strings.CutPrefix(path, runDir+"/")
	if !ok {
		return false
	}
	id, _, _ := strings.Cut(rest, "/")
	return id != "idranges" && own(id)
}

// loops lists the loop devices backed by a file under dataDir.
func loops(dataDir string) []string {
	if dataDir == "" {
		return nil
	}
	files, _ := filepath.Glob(filepath.Join(sysBlock, "loop*", "loop", "backing_file"))
	var out []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if back := strings.TrimSpace(string(b)); err == nil && under(back, dataDir) {
			out = append(out, filepath.Base(filepath.Dir(filepath.Dir(f)))+" "+back)
		}
	}
	return out
}

// processes lists the processes that are the scope's: in one of its
// sandboxes' cgroups, children of the daemon, or naming or holding a file
// under the data dir (agents, shims, s3fs, runsc). The daemon itself and
// the caller are not counted.
func processes(s Scope, own func(string) bool) []string {
	pids, _ := filepath.Glob(filepath.Join(procDir, "[0-9]*"))
	self := os.Getpid()
	var out []string
	for _, p := range pids {
		pid, err := strconv.Atoi(filepath.Base(p))
		if err != nil || pid == self || pid == s.PID {
			continue
		}
		if ownsProcess(p, s, own) {
			comm, _ := os.ReadFile(filepath.Join(p, "comm"))
			out = append(out, fmt.Sprintf("%d %s", pid, strings.TrimSpace(string(comm))))
		}
	}
	return out
}

func ownsProcess(p string, s Scope, own func(string) bool) bool {
	if cg, err := os.ReadFile(filepath.Join(p, "cgroup")); err == nil {
		for _, line := range strings.Split(string(cg), "\n") {
			// hierarchy:controllers:/sbx/<id>[/...]
			parts := strings.SplitN(line, ":", 3)
			if len(parts) < 3 {
				continue
			}
			if rest, ok := strings.CutPrefix(parts[2], "/"+cgroupSub+"/"); ok {
				id, _, _ := strings.Cut(rest, "/")
				if own(id) {
					return true
				}
			}
		}
	}
	if s.PID > 0 && parentOf(p) == s.PID {
		return true
	}
	if s.DataDir == "" {
		return false
	}
	if cmd, err := os.ReadFile(filepath.Join(p, "cmdline")); err == nil {
		for _, arg := range bytes.Split(cmd, []byte{0}) {
			if a := string(arg); under(a, s.DataDir) || a == s.DataDir || strings.Contains(a, "="+s.DataDir+"/") {
				return true
			}
		}
	}
	for _, l := range []string{"cwd", "root"} {
		if t, err := os.Readlink(filepath.Join(p, l)); err == nil && under(t, s.DataDir) {
			return true
		}
	}
	fds, _ := os.ReadDir(filepath.Join(p, "fd"))
	for _, fd := range fds {
		if t, err := os.Readlink(filepath.Join(p, "fd", fd.Name())); err == nil && under(t, s.DataDir) {
			return true
		}
	}
	return false
}

// parentOf is a process's parent pid, 0 if unknown.
func parentOf(p string) int {
	b, err := os.ReadFile(filepath.Join(p, "stat"))
	if err != nil {
		return 0
	}
	// pid (comm) state ppid ...: comm may hold spaces and parentheses.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 2 {
		return 0
	}
	n, _ := strconv.Atoi(f[1])
	return n
}

// links lists the bridge and the interfaces enslaved to it (the sandboxes'
// host-side veths).
func links(bridge string) []string {
	var out []string
	if _, err := os.Stat(filepath.Join("/sys/class/net", bridge)); err == nil {
		out = append(out, bridge)
	}
	ports, _ := os.ReadDir(filepath.Join("/sys/class/net", bridge, "brif"))
	for _, p := range ports {
		out = append(out, p.Name())
	}
	return out
}

// nftables returns the daemon's table (inet <bridge>) if it exists, with
// the number of its sets and of their elements.
func nftables(bridge string) (tables []string, sets, elements int) {
	out, err := exec.Command("nft", "-j", "list", "table", "inet", bridge).Output()
	if err != nil {
		return nil, 0, 0 // no such table, or no nft
	}
	var doc struct {
		Nftables []map[string]json.RawMessage `json:"nftables"`
	}
	if json.Unmarshal(out, &doc) != nil {
		return []string{"inet " + bridge}, 0, 0
	}
	for _, obj := range doc.Nftables {
		raw, ok := obj["set"]
		if !ok {
			continue
		}
		sets++
		var set struct {
			Elem []json.RawMessage `json:"elem"`
		}
		if json.Unmarshal(raw, &set) == nil {
			elements += len(set.Elem)
		}
	}
	return []string{"inet " + bridge}, sets, elements
}

// conntrack counts the tracked connections with an address of subnet other
// than its gateway (the first address), which the daemon's own answers
// use. It reads /proc/net/nf_conntrack, which hosts without the module's
// proc interface lack (then: 0).
func conntrack(subnet string) int {
	p, err := netip.ParsePrefix(subnet)
	if err != nil {
		return 0
	}
	gw := p.Masked().Addr().Next()
	b, err := os.ReadFile(filepath.Join(procDir, "net", "nf_conntrack"))
	if err != nil {
		return 0
	}
	n := 0
	for _, line := range strings.Split(string(b), "\n") {
		for _, f := range strings.Fields(line) {
			_, v, ok := strings.Cut(f, "=")
			if a, err := netip.ParseAddr(v); ok && err == nil && p.Contains(a) && a != gw {
				n++
				break
			}
		}
	}
	return n
}

// claims lists the user id range claims (internal/userns) held by a path in
// dataDir or by one of the scope's sandboxes.
func claims(dataDir string, own func(string) bool) []string {
	files, _ := filepath.Glob(filepath.Join(idRanges, "[0-9]*"))
	var out []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		holder := strings.TrimSpace(string(b))
		if under(holder, dataDir) || own(filepath.Base(filepath.Dir(holder))) {
			out = append(out, filepath.Base(f)+" "+holder)
		}
	}
	return out
}

// files counts the files and directories under dataDir, not crossing into
// other filesystems (a sandbox's disk, a volume, a rootfs mount).
func files(dataDir string) int {
	if dataDir == "" {
		return 0
	}
	root, err := os.Stat(dataDir)
	if err != nil {
		return 0
	}
	dev := devOf(root)
	n := 0
	filepath.WalkDir(dataDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || path == dataDir {
			return nil
		}
		n++
		if d.IsDir() {
			if fi, err := d.Info(); err == nil && devOf(fi) != dev {
				return filepath.SkipDir
			}
		}
		return nil
	})
	return n
}

// daemonStats reads the daemon's open files, threads and resident memory.
func daemonStats(pid int) (fds, threads int, rss int64) {
	p := filepath.Join(procDir, strconv.Itoa(pid))
	entries, _ := os.ReadDir(filepath.Join(p, "fd"))
	fds = len(entries)
	b, _ := os.ReadFile(filepath.Join(p, "status"))
	for _, line := range strings.Split(string(b), "\n") {
		k, v, _ := strings.Cut(line, ":")
		f := strings.Fields(v)
		if len(f) == 0 {
			continue
		}
		switch k {
		case "Threads":
			threads, _ = strconv.Atoi(f[0])
		case "VmRSS": // in kB
			kb, _ := strconv.ParseInt(f[0], 10, 64)
			rss = kb << 10
		}
	}
	return fds, threads, rss
}

func devOf(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Dev)
	}
	return 0
}

// under reports whether path is strictly inside dir.
func under(path, dir string) bool {
	return dir != "" && strings.HasPrefix(path, strings.TrimSuffix(dir, "/")+"/")
}
