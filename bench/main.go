// Command bench measures sbx against the tools people would otherwise use —
// raw runc, Docker Engine and podman — on the same machine, in the same run,
// with the same root filesystem, and prints p50/p95/p99 with the ratio
// sbx/peer as a markdown table (and JSON with -json).
//
//	sudo ./scripts/bench-setup.sh        # once: docker.io, podman
//	CGO_ENABLED=0 go build -o /tmp/sbx ./cmd/sbx
//	sudo go run ./bench -sbx /tmp/sbx -json /tmp/bench.json
//
// It starts its own sbx daemon and its own dockerd on temporary directories
// and removes everything it made when it ends. Peers that are not installed
// are skipped. Systems live in one file each (sbx.go, runc.go, docker.go,
// podman.go), scenarios in scenario_*.go; see registry.go to add either.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
)

var (
	sbxBin        = flag.String("sbx", "", "path of the sbx binary (built with CGO_ENABLED=0)")
	systemsFlag   = flag.String("systems", "sbx,runc,docker,podman", "comma-separated systems to measure; sbx always runs")
	scenariosFlag = flag.String("scenarios", "", "regexp: run only the scenarios whose name matches (and no sbx-only ones)")
	jsonOut       = flag.String("json", "", "also write the results as JSON to this file")
	quick         = flag.Bool("quick", false, "tiny counts: check that every scenario runs, not a measurement")
	execN         = flag.Int("exec-n", 200, "exec round trips per system")
	createN       = flag.Int("create-n", 30, "create→first exec runs per system")
	transferN     = flag.Int("transfer-n", 5, "100 MiB uploads and downloads per system")
	dockerHost    = flag.String("docker-host", "", "use this running dockerd (unix:///var/run/docker.sock) instead of starting one")
	sbxNetwork    = flag.String("sbx-network", "none", `network of the sbx sandboxes in the shared scenarios: "none" (loopback only, as the peers get) or "bridge" (sbx's default)`)
	sbxBaseline   = flag.String("sbx-baseline", "", `also measure the shared scenarios with this sbx binary, on a second daemon ("sbx (baseline)"): a before/after comparison in one run`)
	pythonImage   = flag.String("python-image", defaultPythonImage, "python image tarball for the code-run scenarios (scripts/build-python-image.sh)")
)

// closeAtExit has the run's cleanup close s, a system a scenario started
// for itself, should the run be interrupted first. Close must be safe to
// call twice.
var closeAtExit = func(s System) {}

// The code-context scenarios predate the registry.
func init() {
	registerSbxOnly(func(env *Env) []result {
		return benchContexts(env.Client, *pythonImage, env.n(*execN, 10))
	})
}

func main() {
	flag.Parse()
	if *sbxBin == "" {
		log.Fatal("pass -sbx PATH: build it with `CGO_ENABLED=0 go build -o /tmp/sbx ./cmd/sbx`")
	}
	if os.Geteuid() != 0 {
		log.Fatal("bench must run as root: it runs containers")
	}
	var filter *regexp.Regexp
	if *scenariosFlag != "" {
		filter = regexp.MustCompile(*scenariosFlag)
	}
	work, err := os.MkdirTemp("", "sbx-bench-")
	if err != nil {
		log.Fatal(err)
	}
	env := &Env{Work: work, Quick: *quick}

	var (
		mu      sync.Mutex
		systems []System
		extra   []System // started by a scenario; closed again by it, or here if interrupted
	)
	closeAtExit = func(s System) {
		mu.Lock()
		extra = append(extra, s)
		mu.Unlock()
	}
	cleanup := sync.OnceFunc(func() {
		mu.Lock()
		defer mu.Unlock()
		for _, s := range slices.Backward(extra) {
			s.Close()
		}
		for _, s := range slices.Backward(systems) {
			s.Close()
		}
		unmountUnder(work) // whatever a daemon left mounted (runsc's netns, say)
		os.RemoveAll(work)
	})
	defer cleanup()
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-sigs
		log.Print("interrupted: cleaning up")
		cleanup()
		os.Exit(1)
	}()
	add := func(s System) {
		mu.Lock()
		systems = append(systems, s)
		mu.Unlock()
	}

	sbx, err := openSbx(env, *sbxBin)
	if err != nil {
		log.Fatal(err)
	}
	add(sbx)
	// The soak (soak.go), the chaos rounds (chaos.go) or the load at the
	// edges (chaos_load.go) instead of the scenarios.
	var only func(*sbxSystem) error
	switch {
	case *soakFor > 0:
		only = func(s *sbxSystem) error { return runSoak(s, *soakFor) }
	case *chaosRounds > 0:
		only = runChaos
	case *loadClients > 0:
		only = runLoad
	}
	if only != nil {
		err := only(sbx)
		cleanup()
		if err != nil {
			log.Fatal(err)
		}
		return
	}
	if *sbxBaseline != "" {
		base, err := openSecondSbx(env, *sbxBaseline, "sbx (baseline)", "baseline")
		if err != nil {
			log.Fatal(err)
		}
		add(base)
	}
	if env.RootfsTar, err = writeRootfsTar(env.Rootfs, filepath.Join(work, "rootfs.tar")); err != nil {
		log.Fatal(err)
	}
	want := strings.Split(*systemsFlag, ",")
	for _, p := range peers {
		if !slices.Contains(want, p.name) {
			continue
		}
		s, err := p.open(env)
		if errors.Is(err, errSkip) {
			log.Printf("%s: %v", p.name, err)
			continue
		}
		if err != nil {
			log.Printf("%s: cannot start, leaving it out: %v", p.name, err)
			continue
		}
		add(s)
	}

	var results []result
	for _, sc := range scenarios {
		if filter != nil && !filter.MatchString(sc.Name) {
			continue
		}
		for _, s := range systems {
			log.Printf("%s: %s", sc.Name, s.Name())
			rs, err := sc.Run(env, s)
			if errors.Is(err, errSkip) {
				continue
			}
			if err != nil {
				log.Printf("%s on %s failed: %v", sc.Name, s.Name(), err)
				rs = append(rs, failed(sc.Name, s.Name(), err))
			}
			results = append(results, rs...)
		}
	}
	if filter == nil {
		for _, f := range sbxOnly {
			results = append(results, f(env)...)
		}
	}
	for name, f := range namedSbxOnly {
		if filter == nil || filter.MatchString(name) {
			results = append(results, f(env)...)
		}
	}
	cleanup()

	fmt.Println(machine())
	writeTable(os.Stdout, results)
	if *jsonOut != "" {
		b, _ := json.MarshalIndent(results, "", "  ")
		if err := os.WriteFile(*jsonOut, b, 0o644); err != nil {
			log.Fatal(err)
		}
	}
}
