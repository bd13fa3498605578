package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"time"
)

// writeTable prints results as a markdown table, one block of rows per
// scenario, sbx first, with sbx's p50 divided by each peer's.
func writeTable(w io.Writer, results []result) {
	sbx := map[string]result{}
	var order []string
	seen := map[string]bool{}
	for _, r := range results {
		if !seen[r.Scenario] {
			seen[r.Scenario] = true
			order = append(order, r.Scenario)
		}
		if r.System == "sbx" && r.Error == "" {
			sbx[r.Scenario] = r
		}
	}
	fmt.Fprintln(w, "| scenario | system | n | p50 | p95 | p99 | unit | sbx/peer (p50) |")
	fmt.Fprintln(w, "|---|---|---:|---:|---:|---:|---|---:|")
	for _, sc := range order {
		for _, r := range results {
			if r.Scenario != sc {
				continue
			}
			if r.Error != "" {
				fmt.Fprintf(w, "| %s | %s | — | — | — | — | — | failed: %s |\n", r.Scenario, r.System, oneLine(r.Error))
				continue
			}
			ratio := "—"
			if base, ok := sbx[sc]; ok && r.System != "sbx" && r.P50 > 0 {
				ratio = fmt.Sprintf("%.2f", base.P50/r.P50)
			}
			unit := r.Unit + " ↓"
			if r.Better == "higher" {
				unit = r.Unit + " ↑"
			}
			fmt.Fprintf(w, "| %s | %s | %d | %s | %s | %s | %s | %s |\n", r.Scenario, r.System, r.N, num(r.P50), num(r.P95), num(r.P99), unit, ratio)
		}
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "↓ lower is better, ↑ higher is better. sbx/peer below 1 means sbx is faster for ↓ rows; above 1 means sbx is faster for ↑ rows.")
}

func num(v float64) string {
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.2f", v)
	}
}

func oneLine(s string) string {
	s = strings.ReplaceAll(s, "\n", " ")
	s = strings.ReplaceAll(s, "|", "/")
	if len(s) > 120 {
		s = s[:120] + "…"
	}
	return s
}

// machine describes where the figures come from.
func machine() string {
	var b strings.Builder
	fmt.Fprintf(&b, "- date: %s\n", time.Now().UTC().Format("2006-01-02 15:04 MST"))
	fmt.Fprintf(&b, "- cpu: %s, %d cores visible\n", cpuModel(), runtime.NumCPU())
	fmt.Fprintf(&b, "- memory: %s\n", memTotal())
	if v, err := os.ReadFile("/proc/loadavg"); err == nil {
		f := strings.Fields(string(v))
		fmt.Fprintf(&b, "- load average at the end of the run (1, 5, 15 min): %s\n", strings.Join(f[:3], ", "))
	}
	fmt.Fprintf(&b, "- kernel: %s\n", firstLine(exec.Command("uname", "-sr")))
	if v, err := os.ReadFile("/etc/debian_version"); err == nil {
		fmt.Fprintf(&b, "- os: Debian %s\n", strings.TrimSpace(string(v)))
	}
	fmt.Fprintf(&b, "- runc: %s\n", firstLine(exec.Command("runc", "--version")))
	for _, c := range [][]string{{"dockerd", "--version"}, {"podman", "--version"}, {"conmon", "--version"}} {
		if v := firstLine(exec.Command(c[0], c[1:]...)); v != "" {
			fmt.Fprintf(&b, "- %s: %s\n", c[0], v)
		}
	}
	return b.String()
}

func firstLine(cmd *exec.Cmd) string {
	out, err := cmd.Output()
	if err != nil {
		return ""
	}
	line, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	return line
}

func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return "unknown"
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}

func memTotal() string {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return "unknown"
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "MemTotal:"); ok {
			var kb int64
			fmt.Sscan(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), &kb)
			return fmt.Sprintf("%.1f GiB", float64(kb)/(1<<20))
		}
	}
	return "unknown"
}
