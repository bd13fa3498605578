package main

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/sbxhq/sbx/sdk"
)

// now is the clock for ages in tables; tests replace it.
var now = time.Now

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func newTable(w io.Writer) *tabwriter.Writer {
	return tabwriter.NewWriter(w, 0, 4, 3, ' ', 0)
}

// printSandboxes writes one sandbox per line.
func printSandboxes(w io.Writer, list []sdk.Sandbox) error {
	tw := newTable(w)
	fmt.Fprintln(tw, "NAME\tID\tSTATE\tIMAGE\tCPU\tMEMORY\tCREATED")
	for _, sb := range list {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n",
			orDash(sb.Name), sb.ID, sb.State, orDash(sb.Image),
			formatCPU(sb.CPU), formatMiB(sb.MemoryMiB), ago(sb.CreatedAt))
	}
	return tw.Flush()
}

// printSandbox writes one sandbox as "key: value" lines.
func printSandbox(w io.Writer, sb *sdk.Sandbox) error {
	tw := newTable(w)
	line := func(k, v string) { fmt.Fprintf(tw, "%s:\t%s\n", k, v) }
	line("ID", sb.ID)
	line("Name", orDash(sb.Name))
	state := string(sb.State)
	if sb.Reason != "" {
		state += " (" + sb.Reason + ")"
	}
	line("State", state)
	if sb.Error != "" {
		line("Error", sb.Error)
	}
	line("Image", orDash(sb.Image))
	line("CPU", formatCPU(sb.CPU))
	line("Memory", formatMiB(sb.MemoryMiB))
	line("Pids limit", formatCount(sb.PidsLimit))
	line("Workdir", orDash(sb.Workdir))
	line("Labels", describeKV(sb.Labels))
	line("Env", describeKV(sb.Env))
	line("Created", formatTime(&sb.CreatedAt))
	if sb.StartedAt != nil {
		line("Started", formatTime(sb.StartedAt))
	}
	if sb.StoppedAt != nil {
		line("Stopped", formatTime(sb.StoppedAt))
	}
	lifecycleLines(line, sb) // lifecycle.go
	lineageLines(line, sb)   // snapshot.go
	networkLines(line, sb)   // ports.go
	return tw.Flush()
}

// printImages writes one image per line.
func printImages(w io.Writer, list []sdk.Image) error {
	tw := newTable(w)
	fmt.Fprintln(tw, "NAME\tID\tLAYERS\tSIZE\tSOURCE\tCREATED")
	for _, img := range list {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\n",
			img.Name, shortID(img.ID), img.Layers, formatBytes(img.SizeBytes), orDash(img.Source), ago(img.CreatedAt))
	}
	return tw.Flush()
}

// printImage writes one image as "key: value" lines.
func printImage(w io.Writer, img *sdk.Image) error {
	tw := newTable(w)
	line := func(k, v string) { fmt.Fprintf(tw, "%s:\t%s\n", k, v) }
	line("Name", img.Name)
	line("ID", img.ID)
	line("Layers", strconv.Itoa(img.Layers))
	line("Size", formatBytes(img.SizeBytes))
	line("Source", orDash(img.Source))
	line("Created", formatTime(&img.CreatedAt))
	return tw.Flush()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// formatCPU shows a CPU count; 0 means the daemon set no limit.
func formatCPU(cpu float64) string {
	if cpu == 0 {
		return "-"
	}
	return strconv.FormatFloat(cpu, 'f', -1, 64)
}

func formatMiB(mib int) string {
	if mib == 0 {
		return "-"
	}
	return strconv.Itoa(mib) + " MiB"
}

func formatCount(n int) string {
	if n == 0 {
		return "-"
	}
	return strconv.Itoa(n)
}

func formatTime(t *time.Time) string {
	if t == nil || t.IsZero() {
		return "-"
	}
	return t.Local().Format(time.RFC3339) + " (" + ago(*t) + ")"
}

// ago says how long ago t was, coarsely, as tables do.
func ago(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	d := now().Sub(t)
	switch {
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return fmt.Sprintf("%dm ago", int(d/time.Minute))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh ago", int(d/time.Hour))
	default:
		return fmt.Sprintf("%dd ago", int(d/(24*time.Hour)))
	}
}

// formatBytes renders a measured size in binary units ("1.5 MiB").
func formatBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit && exp < 4; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTP"[exp])
}

// shortID trims a content digest to the 12 hex digits tables show.
func shortID(id string) string {
	if _, hex, ok := strings.Cut(id, ":"); ok {
		id = hex
	}
	if len(id) > 12 {
		return id[:12]
	}
	return orDash(id)
}
