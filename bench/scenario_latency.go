package main

import "time"

func init() {
	registerScenario(Scenario{Order: 10, Name: "create → first exec (cold)", Run: runCreate})
	registerScenario(Scenario{Order: 20, Name: "exec round trip (`true`)", Run: runExec})
}

// runCreate times making a sandbox and running its first command; the delete
// afterwards is not timed. No warm pool exists while this row runs, so every
// create is cold (the warm row is scenario_pool.go's).
func runCreate(env *Env, sys System) ([]result, error) {
	name := "create → first exec (cold)"
	ms, err := timeCreates(sys, env.n(*createN, 3), nil)
	if err != nil {
		return nil, err
	}
	return []result{summarize(name, sys.Name(), "ms", ms)}, nil
}

// timeCreates times n creates each up to its first exec, in ms; before,
// if set, runs untimed ahead of each. The deletes are not timed.
func timeCreates(sys System, n int, before func() error) ([]float64, error) {
	var ms []float64
	for range n {
		if before != nil {
			if err := before(); err != nil {
				return nil, err
			}
		}
		start := time.Now()
		box, err := sys.Create()
		if err != nil {
			return nil, err
		}
		err = box.Exec("true")
		elapsed := time.Since(start)
		if derr := box.Delete(); err == nil {
			err = derr
		}
		if err != nil {
			return nil, err
		}
		ms = append(ms, float64(elapsed.Microseconds())/1000)
	}
	return ms, nil
}

// runExec times `true` in one running sandbox: the cost of a command.
func runExec(env *Env, sys System) ([]result, error) {
	box, err := sys.Create()
	if err != nil {
		return nil, err
	}
	defer box.Delete()
	if err := box.Exec("true"); err != nil { // warm up: first exec pays for page faults
		return nil, err
	}
	r := measure("exec round trip (`true`)", sys.Name(), env.n(*execN, 10), func() error { return box.Exec("true") })
	return []result{r}, nil
}
