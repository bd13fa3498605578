package agent

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/wire"
)

func TestLookupUser(t *testing.T) {
	dir := t.TempDir()
	oldP, oldG := passwdFile, groupFile
	t.Cleanup(func() { passwdFile, groupFile = oldP, oldG })
	passwdFile, groupFile = filepath.Join(dir, "passwd"), filepath.Join(dir, "group")
	os.WriteFile(passwdFile, []byte("root:x:0:0:root:/root:/bin/bash\nuser:x:1000:1000::/home/user:/bin/bash\n"), 0o644)
	os.WriteFile(groupFile, []byte("root:x:0:\nuser:x:1000:\nsudo:x:27:user\n"), 0o644)

	cred, home, err := lookupUser("user")
	if err != nil || cred.Uid != 1000 || cred.Gid != 1000 || home != "/home/user" || !slices.Equal(cred.Groups, []uint32{1000, 27}) {
		t.Fatalf("user: %+v %q %v", cred, home, err)
	}
	if cred, home, err = lookupUser("1000:27"); err != nil || cred.Uid != 1000 || cred.Gid != 27 || home != "/home/user" {
		t.Fatalf("1000:27: %+v %q %v", cred, home, err)
	}
	if cred, home, err = lookupUser("4242"); err != nil || cred.Uid != 4242 || cred.Gid != 4242 || home != "/" {
		t.Fatalf("4242: %+v %q %v", cred, home, err)
	}
	for _, bad := range []string{"nobody-here", "user:x"} {
		if _, _, err := lookupUser(bad); errdefs.CodeOf(err) != wire.CodeUnknownUser {
			t.Fatalf("%q: want UNKNOWN_USER, got %v", bad, err)
		}
	}
	env := withUserEnv([]string{"HOME=/root", "PATH=/bin"}, "user", "/home/user")
	if !slices.Contains(env, "HOME=/home/user") || !slices.Contains(env, "USER=user") || slices.Contains(env, "HOME=/root") {
		t.Fatalf("env %v", env)
	}
}
