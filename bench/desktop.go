package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/sbxhq/sbx/sdk"
)

// The desktop rows: what a computer-use agent's loop costs per step. A
// screenshot is the agent's look at the screen (read over the agent's own X
// connection and encoded in the sandbox, then relayed); the input round
// trip moves the pointer (xdotool in the sandbox) and reads its position
// back, the step after every action.
//
//	sudo scripts/build-desktop-image.sh
//	sudo go run ./bench -sbx /tmp/sbx -systems sbx -scenarios desktop

var (
	desktopImageFlag = flag.String("desktop-image", "/var/cache/sbx/desktop-image.tar", "desktop image tarball for the desktop scenario (scripts/build-desktop-image.sh)")
	desktopN         = flag.Int("desktop-n", 100, "screenshots and input round trips")
)

func init() {
	registerScenario(Scenario{Order: 110, Name: "desktop: screenshot latency, input round trip", Run: runDesktop})
}

func runDesktop(env *Env, sys System) ([]result, error) {
	if sys.Name() != "sbx" {
		return nil, fmt.Errorf("%w: sbx only", errSkip)
	}
	f, err := os.Open(*desktopImageFlag)
	if err != nil {
		return nil, fmt.Errorf("%w: %v (build it with scripts/build-desktop-image.sh, or pass -desktop-image)", errSkip, err)
	}
	defer f.Close()
	c, ctx := env.Client, context.Background()
	start := time.Now()
	if _, err := c.ImportImage(ctx, "desktop", f); err != nil {
		return nil, fmt.Errorf("import %s: %w", *desktopImageFlag, err)
	}
	log.Printf("imported the desktop image in %s", time.Since(start).Round(time.Millisecond))
	defer c.RemoveImage(ctx, "desktop")
	sb, err := c.CreateSandbox(ctx, sdk.CreateSandboxRequest{Image: "desktop", MemoryMiB: 1024, Network: sdk.NetworkNone})
	if err != nil {
		return nil, err
	}
	defer c.DeleteSandbox(ctx, sb.ID, true)

	n := env.n(*desktopN, 3)
	var out []result
	out = append(out, measure("desktop: start 1280x800 (display ready) and stop", "sbx", env.n(5, 1), func() error {
		if _, err := c.StartDesktop(ctx, sb.ID, sdk.DesktopStartRequest{Width: 1280, Height: 800}); err != nil {
			return err
		}
		_, err := c.StopDesktop(ctx, sb.ID)
		return err
	}))
	if _, err := c.StartDesktop(ctx, sb.ID, sdk.DesktopStartRequest{Width: 1280, Height: 800}); err != nil {
		return out, err
	}
	// Something on the screen: a terminal, as the agent's first step.
	if _, err := c.Launch(ctx, sb.ID, sdk.LaunchRequest{Cmd: []string{"xterm"}}); err != nil {
		return out, err
	}
	for _, o := range []struct {
		name string
		opts sdk.ScreenshotOptions
	}{
		{"desktop: screenshot 1280x800 PNG", sdk.ScreenshotOptions{}},
		{"desktop: screenshot 1280x800 JPEG q80", sdk.ScreenshotOptions{Format: "jpeg"}},
		{"desktop: screenshot 300x200 region PNG", sdk.ScreenshotOptions{X: 100, Y: 100, Width: 300, Height: 200}},
	} {
		out = append(out, measure(o.name, "sbx", n, func() error {
			_, err := c.Screenshot(ctx, sb.ID, o.opts)
			return err
		}))
	}
	i := 0
	out = append(out, measure("desktop: input round trip (move pointer, read it back)", "sbx", n, func() error {
		i++
		x, y := 10+i%1000, 10+i%700
		if _, err := c.MoveMouse(ctx, sb.ID, x, y); err != nil {
			return err
		}
		p, err := c.CursorPosition(ctx, sb.ID)
		if err == nil && (p.X != x || p.Y != y) {
			err = fmt.Errorf("pointer at %d,%d after a move to %d,%d", p.X, p.Y, x, y)
		}
		return err
	}))
	out = append(out, measure("desktop: key press (shift)", "sbx", n, func() error {
		return c.PressKey(ctx, sb.ID, "shift")
	}))
	return out, nil
}
