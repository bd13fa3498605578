package daemon

import (
	"github.com/sbxhq/sbx/internal/backup"
	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/internal/volume"
)

// countDisk makes a team's disk quota count all it holds on disk: its
// sandboxes' diskMiB (the store's own sum; a sandbox without one is
// refused under a disk quota, store/sqlite_team.go), its volumes' sizes
// and its backups' stored bytes. Volume and backup creates check it.
func countDisk(st *store.SQLite, vols *volume.Manager, backups *backup.Manager) {
	st.SetDiskOutside(func(team string) (int, error) {
		v, err := vols.SizeMiB(team)
		if err != nil {
			return 0, err
		}
		b, err := backups.StoredMiB(team)
		return v + b, err
	})
	vols.CheckDisk = st.CheckDisk
	backups.CheckDisk = st.CheckDisk
}
