package doctor

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/netip"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"

	"github.com/sbxhq/sbx/internal/diskspace"
	"github.com/sbxhq/sbx/internal/store"
)

func checkSubnet(_ context.Context, h Host, cfg Config) Result {
	const name = "subnet"
	subnet, err := netip.ParsePrefix(cfg.Subnet)
	if err != nil || !subnet.Addr().Is4() {
		return fail(name, fmt.Sprintf("%q is not an IPv4 subnet", cfg.Subnet), "pass --subnet as a CIDR, e.g. 10.88.0.0/16")
	}
	if err := h.SubnetFree(cfg.Bridge, subnet); err != nil {
		return fail(name, err.Error(), "run sbx serve (and sbx doctor) with a --subnet that overlaps no network this host reaches (ip route)")
	}
	return ok(name, subnet.Masked().String()+" overlaps no host route")
}

// minFreeInodes is where the inode check warns: a sandbox's layers and
// files need inodes as much as bytes.
const minFreeInodes = 100_000

func checkDisk(_ context.Context, _ Host, cfg Config) Result {
	const name = "disk"
	dir := existingAncestor(cfg.DataDir)
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return fail(name, "cannot read the free space of "+dir+": "+err.Error(), "check that the data dir's disk is mounted")
	}
	free, err := diskspace.New(dir, cfg.DiskReserveBytes).Free()
	if err != nil {
		return fail(name, "cannot read the free space of "+dir+": "+err.Error(), "check that the data dir's disk is mounted")
	}
	detail := fmt.Sprintf("%s: %d MiB free (reserve %d MiB), %d inodes free", dir, free>>20, cfg.DiskReserveBytes>>20, st.Ffree)
	const fix = "free space on the data dir's disk (delete sandboxes, snapshots or images) or move --data-dir to a larger disk"
	switch {
	case free < cfg.DiskReserveBytes:
		return fail(name, detail+"; below the reserve, sbx refuses to create or start sandboxes", fix)
	case st.Files > 0 && st.Ffree == 0:
		return fail(name, detail+"; no inodes left", fix)
	case free < 2*cfg.DiskReserveBytes:
		return warn(name, detail+"; close to the reserve", fix)
	case st.Files > 0 && st.Ffree < minFreeInodes:
		return warn(name, detail+"; few inodes left", fix)
	}
	return ok(name, detail)
}

// existingAncestor is dir or its nearest parent that exists: the data dir
// of a host that never ran sbx serve is made on that parent's disk.
func existingAncestor(dir string) string {
	for {
		if _, err := os.Stat(dir); err == nil || filepath.Dir(dir) == dir {
			return dir
		}
		dir = filepath.Dir(dir)
	}
}

func checkStore(ctx context.Context, _ Host, cfg Config) Result {
	const name = "store"
	latest := store.LatestSchemaVersion()
	if _, err := os.Stat(cfg.StorePath); errors.Is(err, fs.ErrNotExist) {
		return ok(name, cfg.StorePath+" does not exist yet; sbx serve creates it")
	}
	v, err := store.SchemaVersion(ctx, cfg.StorePath)
	switch {
	case err != nil:
		return fail(name, err.Error(), "check the file's permissions and disk; restore it from a backup if it is damaged")
	case v > latest:
		return fail(name, fmt.Sprintf("%s has schema version %d, newer than this sbx knows (%d): a newer sbx wrote it", cfg.StorePath, v, latest),
			"install the newer sbx again (sbx serve refuses this database and leaves it unchanged)")
	case v < latest:
		return ok(name, fmt.Sprintf("%s has schema version %d; sbx serve migrates it to %d", cfg.StorePath, v, latest))
	}
	return ok(name, fmt.Sprintf("%s has schema version %d (current)", cfg.StorePath, v))
}

func checkClock(_ context.Context, h Host, _ Config) Result {
	const name = "clock"
	now := h.Now()
	if built := commitTime(); !built.IsZero() && now.Before(built.Add(-24*time.Hour)) {
		return fail(name, fmt.Sprintf("the clock says %s, before the commit this sbx was built from (%s)", now.UTC().Format(time.RFC3339), built.Format(time.RFC3339)),
			"set the clock: timedatectl set-ntp true (or date -s), then check again")
	}
	synced, err := h.ClockSynced()
	if err != nil || !synced {
		return warn(name, "the kernel says the clock is not synchronized ("+now.UTC().Format(time.RFC3339)+"); TTLs, token and certificate times and logs rely on it",
			"run an NTP client: apt-get install systemd-timesyncd (or chrony)")
	}
	return ok(name, now.UTC().Format(time.RFC3339)+", synchronized")
}
