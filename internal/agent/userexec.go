package agent

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"syscall"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/wire"
)

// Running a command as another account of the sandbox (the "user" field of
// exec, process and session requests). The account comes from the sandbox's
// own /etc/passwd and /etc/group, read here rather than through os/user so
// the answer never depends on cgo or the host's name service.

var (
	passwdFile = "/etc/passwd"
	groupFile  = "/etc/group"
)

// lookupUser resolves "name", "uid" or "uid:gid" to the credential to start
// a process with (uid, gid, supplementary groups) and the account's home.
// A name that is not in /etc/passwd is a 400 UNKNOWN_USER; a number that is
// not there runs with that uid (and gid, default the same) and home "/".
func lookupUser(spec string) (*syscall.Credential, string, error) {
	name, gidText, hasGid := strings.Cut(spec, ":")
	entry, found := findPasswd(name)
	uid, numeric := parseID(name)
	switch {
	case found:
		uid, _ = parseID(entry[2])
	case !numeric:
		return nil, "", errdefs.Invalid(wire.CodeUnknownUser, "no user %q in the sandbox's /etc/passwd", name)
	}
	gid := uid
	home := "/"
	if found {
		gid, _ = parseID(entry[3])
		home = entry[5]
	}
	if hasGid {
		g, ok := parseID(gidText)
		if !ok {
			return nil, "", errdefs.Invalid(wire.CodeUnknownUser, "user %q: gid %q is not a number", spec, gidText)
		}
		gid = g
	}
	groups := []uint32{}
	if found {
		groups = supplementaryGroups(entry[0], gid)
	}
	return &syscall.Credential{Uid: uid, Gid: gid, Groups: groups}, home, nil
}

// findPasswd returns the /etc/passwd fields of the account named (or
// numbered) name.
func findPasswd(name string) ([]string, bool) {
	var hit []string
	scanColonFile(passwdFile, func(f []string) bool {
		if len(f) >= 7 && (f[0] == name || f[2] == name) {
			hit = f
			return false
		}
		return true
	})
	return hit, hit != nil
}

// supplementaryGroups lists the gids of /etc/group that name is a member of.
func supplementaryGroups(name string, primary uint32) []uint32 {
	groups := []uint32{primary}
	scanColonFile(groupFile, func(f []string) bool {
		if len(f) < 4 {
			return true
		}
		for _, m := range strings.Split(f[3], ",") {
			if g, ok := parseID(f[2]); ok && m == name && g != primary {
				groups = append(groups, g)
			}
		}
		return true
	})
	return groups
}

func scanColonFile(path string, each func([]string) bool) {
	f, err := os.Open(path)
	if err != nil {
		return
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if !each(strings.Split(line, ":")) {
			return
		}
	}
}

func parseID(s string) (uint32, bool) {
	n, err := strconv.ParseUint(s, 10, 32)
	return uint32(n), err == nil
}

// withUserEnv sets HOME, USER and LOGNAME of the account in env.
func withUserEnv(env []string, spec, home string) []string {
	name, _, _ := strings.Cut(spec, ":")
	if e, ok := findPasswd(name); ok {
		name = e[0]
	}
	set := map[string]string{"HOME": home, "USER": name, "LOGNAME": name}
	out := make([]string, 0, len(env)+3)
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if _, ok := set[k]; !ok {
			out = append(out, kv)
		}
	}
	for _, k := range []string{"HOME", "USER", "LOGNAME"} {
		out = append(out, k+"="+set[k])
	}
	return out
}
