package sandbox

import (
	"time"

	"testing"

	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/wire"
)

func TestEnvChangeTurnsOneEnvironmentIntoAnother(t *testing.T) {
	from := []string{"A=1", "B=2", "C=3"}
	to := []string{"A=1", "B=9", "D=4"}
	change := envChange(from, to)
	if len(change) != 3 || *change["B"] != "9" || *change["D"] != "4" || change["C"] != nil {
		t.Fatalf("change = %v", change)
	}
	if _, ok := change["C"]; !ok {
		t.Fatal("C, set only before, is not unset")
	}
	if len(envChange(to, to)) != 0 {
		t.Fatal("no change between equal environments")
	}
}

func TestPoolMatchesOnlyWhatShapesTheInstance(t *testing.T) {
	pool := store.Spec{ImageID: "sha256:a", Layers: []string{"l1"}, CPU: 1, MemoryMiB: 256, PidsLimit: 1024, Workdir: "/workspace", Network: wire.NetworkBridge,
		Env: map[string]string{"X": "1"}}
	same := pool
	same.Env, same.Labels = map[string]string{"Y": "2"}, map[string]string{"k": "v"}
	same.Egress = &store.Egress{}
	if !poolMatches(pool, same) {
		t.Fatal("env, labels and egress must not prevent a match")
	}
	for name, edit := range map[string]func(*store.Spec){
		"memory":     func(s *store.Spec) { s.MemoryMiB = 512 },
		"image":      func(s *store.Spec) { s.ImageID = "sha256:b" },
		"class":      func(s *store.Spec) { s.Class = "gvisor" },
		"network":    func(s *store.Spec) { s.Network = wire.NetworkNone },
		"entrypoint": func(s *store.Spec) { s.Entrypoint = []string{"serve"} },
		"snapshot":   func(s *store.Spec) { s.Snapshot = "snap" },
		"volumes":    func(s *store.Spec) { s.Volumes = []wire.VolumeMount{{Name: "v", Path: "/v"}} },
		// HTTP rules mount the egress CA's trust store at start.
		"http egress": func(s *store.Spec) { s.Egress = &store.Egress{HTTP: &wire.HTTPEgress{}} },
	} {
		want := pool
		edit(&want)
		if poolMatches(pool, want) {
			t.Errorf("a create differing in %s matched the pool", name)
		}
	}
}

func TestPoolTargetGrowsWithRecentAdoptionsUpToMax(t *testing.T) {
	p := &warmPool{rec: store.PoolRecord{Spec: wire.CreatePoolRequest{Min: 2, Max: 4}}}
	now := time.Now()
	if p.target(now) != 2 {
		t.Fatal("target without demand is min")
	}
	p.recent = append(p.recent, now, now, now, now)
	if p.target(now) != 4 {
		t.Fatal("target is capped at max")
	}
	if p.target(now.Add(2*poolBurstWindow)) != 2 {
		t.Fatal("old adoptions no longer raise the target")
	}
}

func TestValidatePoolRequest(t *testing.T) {
	for _, req := range []wire.CreatePoolRequest{
		{Name: "", Min: 1}, {Name: "Bad Name", Min: 1}, {Name: "p", Min: -1}, {Name: "p", Min: 5, Max: 2}, {Name: "p", Min: 0, Max: 0}, {Name: "p", Min: 101},
	} {
		if err := validatePoolRequest(&req); err == nil {
			t.Errorf("%+v accepted", req)
		}
	}
	ok := wire.CreatePoolRequest{Name: "p", Min: 3}
	if err := validatePoolRequest(&ok); err != nil || ok.Max != 3 {
		t.Fatalf("min 3 without max: %v, max %d", err, ok.Max)
	}
}
