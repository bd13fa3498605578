package main

import (
	"fmt"
	"sync"
	"time"
)

func init() {
	registerScenario(Scenario{Order: 40, Name: "10 concurrent create → exec → delete", Run: concurrent(10)})
	registerScenario(Scenario{Order: 41, Name: "50 concurrent create → exec → delete", Run: concurrent(50)})
}

// concurrent starts n clients at once, each creating a sandbox, running
// `true` in it and deleting it. It reports each sandbox's latency and the
// time until the last one was gone.
func concurrent(n int) func(env *Env, sys System) ([]result, error) {
	name := fmt.Sprintf("%d concurrent create → exec → delete", n)
	return func(env *Env, sys System) ([]result, error) {
		n := env.n(n, 3)
		ms := make([]float64, n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		start := time.Now()
		for i := range n {
			wg.Go(func() {
				t0 := time.Now()
				box, err := sys.Create()
				if err == nil {
					err = box.Exec("true")
					if derr := box.Delete(); err == nil {
						err = derr
					}
				}
				ms[i], errs[i] = float64(time.Since(t0).Microseconds())/1000, err
			})
		}
		wg.Wait()
		wall := float64(time.Since(start).Microseconds()) / 1000
		for _, err := range errs {
			if err != nil {
				return nil, err
			}
		}
		return []result{
			summarize(name+" (each)", sys.Name(), "ms", ms),
			summarize(name+" (all done)", sys.Name(), "ms", []float64{wall}),
		}, nil
	}
}
