// Command data-analysis is a data-analysis agent's run on sbx's code
// interpreter: it writes a CSV into a sandbox of the python image, runs
// cells in one Python context (pandas state carries from cell to cell),
// prints the numbers the cells computed and saves the chart they drew.
//
//	SBX_HOST=http://127.0.0.1:7423 SBX_TOKEN=… go run ./examples/data-analysis -out chart.png
//
// No model is called: the cells are the scripted steps below. See README.md.
package main

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/sbxhq/sbx/sdk"
)

//go:embed sales.csv
var salesCSV []byte

// steps are the cells a model would write, one after another, each after
// reading the previous cell's output. A real agent loop replaces this list:
// send the question and each RunResult (stdout, error, results) to the
// model and run the code it answers with, until it answers without code.
var steps = []string{
	// 1. Load and look.
	`import pandas as pd
df = pd.read_csv("/workspace/sales.csv")
df["revenue"] = df.units * df.price
df.shape`,
	// 2. Compute, and print the answer as JSON for the caller.
	`import json
by_region = df.groupby("region").revenue.sum()
by_month = df.groupby("month").revenue.sum()
print(json.dumps({
    "rows": len(df),
    "total": round(float(df.revenue.sum()), 2),
    "by_region": {k: round(float(v), 2) for k, v in by_region.items()},
    "best_month": by_month.idxmax(),
    "best_month_revenue": round(float(by_month.max()), 2),
}))`,
	// 3. Draw. A figure left open is returned as a PNG result.
	`import matplotlib.pyplot as plt
pivot = df.pivot(index="month", columns="region", values="revenue")
ax = pivot.plot(kind="bar", figsize=(7, 4), title="Revenue by month and region")
ax.set_ylabel("revenue")
plt.tight_layout()`,
}

// Summary is what step 2 prints.
type Summary struct {
	Rows             int                `json:"rows"`
	Total            float64            `json:"total"`
	ByRegion         map[string]float64 `json:"by_region"`
	BestMonth        string             `json:"best_month"`
	BestMonthRevenue float64            `json:"best_month_revenue"`
}

func main() {
	image := flag.String("image", "python", "image with python3, pandas and matplotlib (scripts/build-python-image.sh --import)")
	out := flag.String("out", "chart.png", "where to save the chart")
	csvFile := flag.String("csv", "", "CSV to analyse instead of the bundled sales.csv (same columns: month,region,units,price)")
	keep := flag.Bool("keep", false, "keep the sandbox afterwards")
	flag.Parse()
	log.SetFlags(0)
	if err := run(context.Background(), *image, *out, *csvFile, *keep); err != nil {
		log.Fatalf("data-analysis: %v", err)
	}
}

func run(ctx context.Context, image, out, csvFile string, keep bool) error {
	data := salesCSV
	if csvFile != "" {
		var err error
		if data, err = os.ReadFile(csvFile); err != nil {
			return err
		}
	}
	c, err := sdk.FromEnv()
	if err != nil {
		return err
	}
	sb, err := c.CreateSandbox(ctx, sdk.CreateSandboxRequest{Image: image, MemoryMiB: 1024, Labels: map[string]string{"example": "data-analysis"}})
	if err != nil {
		return fmt.Errorf("create a sandbox of image %q: %w", image, err)
	}
	fmt.Printf("sandbox %s (image %s)\n", sb.ID, image)
	if !keep {
		defer c.DeleteSandbox(context.Background(), sb.ID, true)
	}
	box := c.Sandbox(sb.ID)
	if _, err := box.Upload(ctx, "/workspace/sales.csv", bytes.NewReader(data), 0o644); err != nil {
		return fmt.Errorf("upload the CSV: %w", err)
	}
	py, err := box.CreateContext(ctx, sdk.CreateContextRequest{Language: "python"})
	if err != nil {
		return fmt.Errorf("start a python context: %w", err)
	}

	var summary *Summary
	var chart []byte
	for i, code := range steps {
		res, err := box.RunCode(ctx, py.ID, sdk.RunCodeRequest{Code: code, TimeoutSeconds: 120}, nil)
		if err != nil {
			return fmt.Errorf("step %d: %w", i+1, err)
		}
		if res.Error != nil { // a model would read the traceback and try again
			return fmt.Errorf("step %d raised %s: %s\n%s", i+1, res.Error.Name, res.Error.Value, res.Error.Traceback)
		}
		if res.TimedOut {
			return fmt.Errorf("step %d timed out", i+1)
		}
		fmt.Printf("step %d: %d ms", i+1, res.DurationMs)
		for _, r := range res.Results {
			switch {
			case len(r.PNG) > 0:
				chart = r.PNG
				fmt.Printf(", a PNG of %d bytes", len(r.PNG))
			case r.Main:
				fmt.Printf(", value %s", r.Text)
			}
		}
		fmt.Println()
		if strings.HasPrefix(strings.TrimSpace(res.Stdout), "{") {
			summary = new(Summary)
			if err := json.Unmarshal([]byte(res.Stdout), summary); err != nil {
				return fmt.Errorf("step %d printed no summary: %w", i+1, err)
			}
		}
	}
	if summary == nil || chart == nil {
		return errors.New("the steps made no summary or no chart")
	}
	fmt.Printf("rows: %d\n", summary.Rows)
	fmt.Printf("total revenue: %.2f\n", summary.Total)
	for _, region := range slices.Sorted(maps.Keys(summary.ByRegion)) {
		fmt.Printf("revenue %s: %.2f\n", region, summary.ByRegion[region])
	}
	fmt.Printf("best month: %s (%.2f)\n", summary.BestMonth, summary.BestMonthRevenue)
	if err := os.WriteFile(out, chart, 0o644); err != nil {
		return err
	}
	fmt.Printf("chart: %s\n", out)
	return nil
}
