package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/sbxhq/sbx/sdk"
)

// httpRulesFlag is sbx egress set's --http FILE: the policy's http section.
type httpRulesFlag struct{ file string }

func addHTTPRulesFlag(cmd *cobra.Command) *httpRulesFlag {
	f := &httpRulesFlag{}
	cmd.Flags().StringVar(&f.file, "http", "", `JSON file ("-" for stdin) of the policy's http section, {"rules": [...]}: rules for the sandbox's HTTP and HTTPS (see docs/egress-http.md); without it the policy has none`)
	return f
}

// rules reads the file, nil without --http.
func (f *httpRulesFlag) rules(stdin io.Reader) (*sdk.HTTPEgress, error) {
	if f.file == "" {
		return nil, nil
	}
	r := stdin
	if f.file != "-" {
		file, err := os.Open(f.file)
		if err != nil {
			return nil, usagef("--http: %v", err)
		}
		defer file.Close()
		r = file
	}
	var h sdk.HTTPEgress
	dec := json.NewDecoder(io.LimitReader(r, 1<<20))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&h); err != nil {
		return nil, usagef("--http %s: not an http section: %v", f.file, err)
	}
	return &h, nil
}

func newEgressLogCmd(g *globals) *cobra.Command {
	var follow bool
	cmd := &cobra.Command{
		Use:   "log SANDBOX [--follow]",
		Short: "Show a sandbox's HTTP egress log: the requests its http rules saw",
		Long: `Show the HTTP egress log of a sandbox whose egress policy has an http section:
one line per request (method, host, path, status, response bytes, duration,
the rule applied and what it did), and one per HTTPS connection passed through
untouched (method TLS, action passthrough). The daemon keeps the last 1000
entries of each sandbox in memory. With --follow, new entries are printed as
they happen until interrupted.`,
		Example: `  sbx egress log box
  sbx egress log box --follow
  sbx egress log box -o json`,
		Args: exactArgs(1, "SANDBOX"),
	}
	out := addOutputFlag(cmd)
	cmd.Flags().BoolVarP(&follow, "follow", "f", false, "keep printing new entries")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if err := out.check(); err != nil {
			return err
		}
		c, err := g.client()
		if err != nil {
			return err
		}
		w := cmd.OutOrStdout()
		if follow {
			enc := json.NewEncoder(w)
			return c.FollowEgressLog(cmd.Context(), args[0], func(e sdk.EgressLogEntry) error {
				if out.format == "json" {
					return enc.Encode(e)
				}
				_, err := fmt.Fprintln(w, egressLogLine(e))
				return err
			})
		}
		list, err := c.EgressLog(cmd.Context(), args[0])
		if err != nil {
			return err
		}
		return out.print(w, list, func(w io.Writer) error {
			for _, e := range list {
				fmt.Fprintln(w, egressLogLine(e))
			}
			return nil
		})
	}
	return cmd
}

// egressLogLine is one entry as a line of text.
func egressLogLine(e sdk.EgressLogEntry) string {
	rule := "-"
	if e.Rule >= 0 {
		rule = "#" + strconv.Itoa(e.Rule)
	}
	line := fmt.Sprintf("%s %s %s://%s%s %d %dB %.1fms rule=%s %s", e.Time.Format("15:04:05.000"), e.Method, e.Scheme, e.Host, e.Path, e.Status, e.Bytes, e.DurationMs, rule, e.Action)
	if e.Error != "" {
		line += " (" + e.Error + ")"
	}
	return line
}
