package census

import (
	"fmt"
	"slices"
)

// Change is one kind of object that differs between two censuses.
type Change struct {
	What    string   `json:"what"`
	Before  int      `json:"before"`
	After   int      `json:"after"`
	Added   []string `json:"added,omitempty"`   // named objects after has and before had not
	Removed []string `json:"removed,omitempty"` // and the other way round
}

func (c Change) String() string {
	s := fmt.Sprintf("%s: %d -> %d", c.What, c.Before, c.After)
	if len(c.Added) > 0 {
		s += fmt.Sprintf(", new: %v", c.Added)
	}
	return s
}

// Diff lists each kind of object whose count or names differ from before
// to after, in the order of Census's fields.
func Diff(before, after *Census) []Change {
	var out []Change
	named := func(what string, b, a []string) {
		c := Change{What: what, Before: len(b), After: len(a)}
		for _, x := range a {
			if !slices.Contains(b, x) {
				c.Added = append(c.Added, x)
			}
		}
		for _, x := range b {
			if !slices.Contains(a, x) {
				c.Removed = append(c.Removed, x)
			}
		}
		if len(c.Added) > 0 || len(c.Removed) > 0 {
			out = append(out, c)
		}
	}
	counted := func(what string, b, a int64) {
		if b != a {
			out = append(out, Change{What: what, Before: int(b), After: int(a)})
		}
	}
	named("processes", before.Processes, after.Processes)
	named("cgroups", before.Cgroups, after.Cgroups)
	named("mounts", before.Mounts, after.Mounts)
	named("fuse mounts", before.FUSE, after.FUSE)
	named("loop devices", before.Loops, after.Loops)
	named("links", before.Links, after.Links)
	named("nftables tables", before.NftTables, after.NftTables)
	counted("nftables sets", int64(before.NftSets), int64(after.NftSets))
	counted("nftables elements", int64(before.NftElements), int64(after.NftElements))
	counted("conntrack entries", int64(before.Conntrack), int64(after.Conntrack))
	named("user id ranges", before.IDRanges, after.IDRanges)
	counted("files", int64(before.Files), int64(after.Files))
	counted("daemon fds", int64(before.FDs), int64(after.FDs))
	counted("daemon threads", int64(before.Threads), int64(after.Threads))
	counted("daemon rss bytes", before.RSSBytes, after.RSSBytes)
	return out
}

// Host is the part of c that outlives its daemon on the host: processes,
// cgroups, mounts, loop devices, links, nftables objects, connection
// tracking and id range claims; not the data dir's files nor the daemon's
// own fds, threads and memory.
func (c *Census) Host() *Census {
	h := *c
	h.Files, h.FDs, h.Threads, h.RSSBytes = 0, 0, 0, 0
	return &h
}

// Grown lists the changes in which after has more than before: new named
// objects, or a higher count.
func Grown(changes []Change) []Change {
	var out []Change
	for _, c := range changes {
		if len(c.Added) > 0 || (c.Added == nil && c.Removed == nil && c.After > c.Before) {
			out = append(out, c)
		}
	}
	return out
}
