package main

import (
	"context"
	"flag"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/sbxhq/sbx/internal/loadgen"
	"github.com/sbxhq/sbx/sdk"
)

var (
	loadClients   = flag.Int("load", 0, "instead of the scenarios: this many concurrent API clients mixing create/exec/files/list on sbx, then a tenant at its rate limit beside one under it (internal/loadgen)")
	loadFor       = flag.Duration("load-for", time.Minute, "how long the -load clients run")
	loadSandboxes = flag.Int("load-sandboxes", 20, "sandboxes the -load clients share")
	loadCreates   = flag.Int("load-creates", 8, "creates the -load clients may have in flight at once")
)

// runLoad runs the crowd, then the neighbours, and prints both.
func runLoad(s *sbxSystem) error {
	ctx := context.Background()
	// Creates and deletes with nothing else of the run going, to compare
	// the crowd's with.
	var idleCreate, idleDelete []time.Duration
	for range 5 {
		began := time.Now()
		sb, err := s.client.CreateSandbox(ctx, sdk.CreateSandboxRequest{})
		if err != nil {
			return err
		}
		idleCreate = append(idleCreate, time.Since(began))
		began = time.Now()
		if err := s.client.DeleteSandbox(ctx, sb.ID, true); err != nil {
			return err
		}
		idleDelete = append(idleDelete, time.Since(began))
	}
	fmt.Printf("alone: create p50 %s, delete p50 %s (5 each)\n", msText(loadgen.Percentile(idleCreate, 50)), msText(loadgen.Percentile(idleDelete, 50)))
	res, err := loadgen.Crowd(s.client.Host(), s.token, *loadClients, *loadSandboxes, *loadCreates, *loadFor)
	if err != nil {
		return err
	}
	fmt.Printf("%d concurrent clients for %s over %d sandboxes (at most %d creates at once)\n",
		*loadClients, res.Elapsed.Round(time.Second), *loadSandboxes, *loadCreates)
	fmt.Println("| operation | answered | per second | p50 | p99 | errors |")
	fmt.Println("|---|---|---|---|---|---|")
	for _, op := range []string{"list", "get", "exec", "upload", "download", "create", "delete"} {
		lat := res.Latency[op]
		var errs []string
		for code, n := range res.Errors[op] {
			errs = append(errs, fmt.Sprintf("%d× %s", n, code))
		}
		slices.Sort(errs)
		fmt.Printf("| %s | %d | %.1f | %s | %s | %s |\n", op, len(lat), float64(len(lat))/res.Elapsed.Seconds(),
			msText(loadgen.Percentile(lat, 50)), msText(loadgen.Percentile(lat, 99)), strings.Join(errs, ", "))
	}

	// The daemon's default limits (--rate-limit 100, --rate-burst 200)
	// for both tenants; the calm one sends 20 calls a second.
	tenant := func(team string) (loadgen.Tenant, error) {
		if _, err := s.client.CreateTeam(ctx, sdk.CreateTeamRequest{ID: team}); err != nil {
			return loadgen.Tenant{}, err
		}
		k, err := s.client.CreateKey(ctx, sdk.CreateKeyRequest{Name: team, Team: team, Scopes: []string{sdk.ScopeSandboxesWrite, sdk.ScopeSandboxesRead, sdk.ScopeExec}})
		if err != nil {
			return loadgen.Tenant{}, err
		}
		c := sdk.NewClient(s.client.Host(), k.Key)
		sb, err := c.CreateSandbox(ctx, sdk.CreateSandboxRequest{})
		if err != nil {
			return loadgen.Tenant{}, err
		}
		return loadgen.Tenant{Client: c, Sandbox: sb.ID}, nil
	}
	calm, err := tenant("calm")
	if err != nil {
		return err
	}
	hot, err := tenant("hot")
	if err != nil {
		return err
	}
	nb, err := loadgen.Neighbours(calm, hot, 400, 50*time.Millisecond, 8)
	if err != nil {
		return err
	}
	fmt.Println("\n| calm tenant (20 calls/s, limit 100/s) | calls | p50 | p99 | errors |")
	fmt.Println("|---|---|---|---|---|")
	fmt.Printf("| alone | %d | %s | %s | |\n", len(nb.Alone), msText(loadgen.Percentile(nb.Alone, 50)), msText(loadgen.Percentile(nb.Alone, 99)))
	fmt.Printf("| beside a tenant at its limit | %d | %s | %s | %d |\n", len(nb.Beside), msText(loadgen.Percentile(nb.Beside, 50)), msText(loadgen.Percentile(nb.Beside, 99)), len(nb.CalmErrors))
	fmt.Printf("hot tenant (8 clients, as fast as answered): %d answered, %d refused 429, %d other errors\n", nb.HotOK, nb.HotLimited, len(nb.HotOther))
	if len(nb.CalmErrors) > 0 {
		return fmt.Errorf("the calm tenant got %d errors, first: %v", len(nb.CalmErrors), nb.CalmErrors[0])
	}
	return nil
}

// msText is d in milliseconds (ms: gvisor.go), for the tables.
func msText(d time.Duration) string { return fmt.Sprintf("%.1f ms", ms(d)) }
