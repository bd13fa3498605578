package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/sbxhq/sbx/sdk"
)

// defaultPythonImage is where scripts/build-python-image.sh leaves its
// tarball (a link to the newest build).
const defaultPythonImage = "/var/cache/sbx/python-image.tar"

// benchContexts measures code runs: `1+1` in a warm python context (one
// interpreter, many runs) and a stateless run (a fresh interpreter each).
// It needs the python image; without it the scenarios are skipped.
func benchContexts(c *sdk.Client, tarball string, n int) []result {
	f, err := os.Open(tarball)
	if err != nil {
		log.Printf("skipping code-run scenarios: %v (build the image with scripts/build-python-image.sh, or pass -python-image)", err)
		return nil
	}
	defer f.Close()
	ctx := context.Background()
	start := time.Now()
	if _, err := c.ImportImage(ctx, "python", f); err != nil {
		log.Fatalf("import %s: %v", tarball, err)
	}
	log.Printf("imported the python image in %s", time.Since(start).Round(time.Millisecond))
	defer c.RemoveImage(ctx, "python") // after the sandbox (defers run last first)
	sb, err := c.CreateSandbox(ctx, sdk.CreateSandboxRequest{Image: "python", MemoryMiB: 1024})
	if err != nil {
		log.Fatal(err)
	}
	defer c.DeleteSandbox(ctx, sb.ID, true)

	var out []result
	for _, lang := range []string{"python", "javascript"} {
		cx, err := c.CreateContext(ctx, sb.ID, sdk.CreateContextRequest{Language: lang})
		if err != nil {
			log.Fatal(err)
		}
		out = append(out, measure("run `1+1` in a warm "+lang+" context", "sbx", n, func() error {
			return want2(c.RunCode(ctx, sb.ID, cx.ID, sdk.RunCodeRequest{Code: "1+1"}, nil))
		}))
		out = append(out, measure("stateless "+lang+" run `1+1`", "sbx", max(n/10, 5), func() error {
			return want2(c.Run(ctx, sb.ID, sdk.RunRequest{Language: lang, Code: "1+1"}, nil))
		}))
	}
	out = append(out, measure("create python context", "sbx", max(n/10, 5), func() error {
		cx, err := c.CreateContext(ctx, sb.ID, sdk.CreateContextRequest{Language: "python"})
		if err == nil {
			err = c.DeleteContext(ctx, sb.ID, cx.ID)
		}
		return err
	}))
	return out
}

func want2(res *sdk.RunResult, err error) error {
	if err != nil {
		return err
	}
	for _, r := range res.Results {
		if r.Main && r.Text == "2" {
			return nil
		}
	}
	return fmt.Errorf("1+1 gave %+v", res)
}
