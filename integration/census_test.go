package integration

import "github.com/sbxhq/sbx/internal/census"

// censusScope is what d's test owns on the host: its data dir, bridge,
// subnet and sandboxes (internal/census).
func (d *daemon) censusScope() census.Scope {
	return census.Scope{DataDir: d.dataDir, Bridge: d.flag("--bridge"), Subnet: d.flag("--subnet"),
		Sandbox: func(id string) bool { return d.created[id] }}
}

// watchCensus takes a census of d's scope before its daemon starts and
// registers, to run after d.cleanup, the check that the host holds nothing
// more of it then: no process, cgroup, mount, loop device, link, nftables
// table, tracked connection or id range.
func (d *daemon) watchCensus() {
	before := census.Take(d.censusScope()).Host()
	d.t.Cleanup(func() {
		after := census.Take(d.censusScope()).Host()
		for _, c := range census.Grown(census.Diff(before, after)) {
			d.t.Errorf("left on the host after cleanup: %s", c)
		}
	})
}
