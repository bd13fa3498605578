package integration

import (
	"context"
	"slices"
	"testing"

	"github.com/sbxhq/sbx/internal/census"
	"github.com/sbxhq/sbx/sdk"
)

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

// TestCensusSeesASandbox: the census of a daemon counts what a real
// sandbox holds (processes, cgroups, mounts, its disk's loop device, its
// veth, its nftables set elements) and, once it is deleted, the host part
// is back to what it was before it was made.
func TestCensusSeesASandbox(t *testing.T) {
	d := startDaemon(t)
	scope := d.censusScope()
	scope.PID = d.cmd.Process.Pid
	before := census.Take(scope)
	if len(before.Links) != 1 || len(before.NftTables) != 1 || before.FDs == 0 || before.Threads == 0 || before.RSSBytes == 0 || before.Files == 0 {
		t.Errorf("census of an idle daemon: %+v, want its bridge, its table, and its own fds, threads, memory and files", before)
	}
	sb := d.create(sdk.CreateSandboxRequest{DiskMiB: 32, Egress: &sdk.EgressPolicy{Mode: "allow-list", CIDRs: []string{"192.0.2.0/24"}}})
	during := census.Take(scope)
	changes := census.Diff(before, during)
	for _, what := range []string{"processes", "cgroups", "mounts", "loop devices", "links", "nftables elements", "user id ranges"} {
		if !slices.ContainsFunc(changes, func(c census.Change) bool { return c.What == what && c.After > c.Before }) {
			t.Errorf("the census did not count the sandbox's %s: %v", what, changes)
		}
	}
	if err := d.client.DeleteSandbox(context.Background(), sb.ID, true); err != nil {
		t.Fatal(err)
	}
	if left := census.Grown(census.Diff(before.Host(), census.Take(scope).Host())); len(left) > 0 {
		t.Errorf("left after delete: %v", left)
	}
}
