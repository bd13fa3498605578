package main

import (
	"context"
	"flag"
	"fmt"
	"time"

	"github.com/sbxhq/sbx/sdk"
)

// Warm pools (sbx only): create → first exec when the create adopts a
// started instance from a pool. Between runs the pool is given time to
// refill, untimed, so every timed create finds an instance ready: this is
// the latency a caller sees from a pool sized for its rate.

var poolN = flag.Int("pool-n", 50, "create→first exec runs from a warm pool")

func init() {
	registerScenario(Scenario{Order: 11, Name: "create → first exec (warm pool)", Run: runPoolCreate})
}

func runPoolCreate(env *Env, sys System) ([]result, error) {
	var sx *sbxSystem
	switch s := sys.(type) {
	case *sbxSystem:
		sx = s
	case *secondSbx: // -sbx-baseline: before and after in one run
		sx = s.sbxSystem
	default:
		return nil, fmt.Errorf("%w: sbx only", errSkip)
	}
	c, ctx := sx.client, context.Background()
	const name = "bench-pool"
	// The same spec as the cold row's creates (sbxSystem.Create), so a
	// plain create adopts.
	if _, err := c.CreatePool(ctx, sdk.CreatePoolRequest{Name: name, Template: sdk.PoolTemplate{Network: *sbxNetwork}, Min: 5, Max: 5}); err != nil {
		return nil, err
	}
	defer c.DeletePool(ctx, name)
	ready := func() error {
		deadline := time.Now().Add(2 * time.Minute)
		for {
			p, err := c.GetPool(ctx, name)
			if err != nil {
				return err
			}
			if p.Ready >= p.Min {
				return nil
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("pool did not refill within 2 minutes (%d ready)", p.Ready)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	n := env.n(*poolN, 3)
	ms, err := timeCreates(sys, n, ready)
	if err != nil {
		return nil, err
	}
	p, err := c.GetPool(ctx, name)
	if err != nil {
		return nil, err
	}
	if p.Adopted < int64(n) {
		return nil, fmt.Errorf("only %d of %d creates adopted a pool instance", p.Adopted, n)
	}
	return []result{summarize("create → first exec (warm pool)", sys.Name(), "ms", ms)}, nil
}
