package main

import (
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"time"
)

func init() {
	registerScenario(Scenario{Order: 30, Name: "upload / download 100 MiB", Run: runTransfer})
}

const transferSize = 100 << 20

var (
	payloadOnce sync.Once
	payloadPath string
	payloadErr  error
)

// payload writes 100 MiB of random bytes once; the page cache then holds it,
// so every system reads the same warm file.
func payload(env *Env) (string, error) {
	payloadOnce.Do(func() {
		payloadPath = filepath.Join(env.Work, "payload.bin")
		f, err := os.Create(payloadPath)
		if err != nil {
			payloadErr = err
			return
		}
		defer f.Close()
		rng := rand.NewChaCha8([32]byte{1})
		_, payloadErr = io.CopyN(f, rng, transferSize)
	})
	return payloadPath, payloadErr
}

// runTransfer times copying 100 MiB into a sandbox's /workspace and back
// out, as MiB/s: the SDK for sbx, docker's archive API (what `docker cp`
// uses), `podman cp`, and `runc exec` with cat for raw runc.
func runTransfer(env *Env, sys System) ([]result, error) {
	src, err := payload(env)
	if err != nil {
		return nil, err
	}
	box, err := sys.Create()
	if err != nil {
		return nil, err
	}
	defer box.Delete()
	n := env.n(*transferN, 1)
	var up, down []float64
	for i := 0; i < n; i++ {
		dst := fmt.Sprintf("/workspace/payload-%d.bin", i)
		start := time.Now()
		if err := box.Upload(src, dst); err != nil {
			return nil, fmt.Errorf("upload: %w", err)
		}
		up = append(up, mibPerSec(time.Since(start)))
		start = time.Now()
		got, err := box.Download(dst, io.Discard)
		if err != nil {
			return nil, fmt.Errorf("download: %w", err)
		}
		if got != transferSize {
			return nil, fmt.Errorf("download: %d bytes, want %d", got, transferSize)
		}
		down = append(down, mibPerSec(time.Since(start)))
		if err := box.Exec("rm", dst); err != nil {
			return nil, err
		}
	}
	return []result{
		summarize("upload 100 MiB", sys.Name(), "MiB/s", up),
		summarize("download 100 MiB", sys.Name(), "MiB/s", down),
	}, nil
}

func mibPerSec(d time.Duration) float64 { return float64(transferSize>>20) / d.Seconds() }
