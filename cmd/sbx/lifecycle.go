package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/sbxhq/sbx/sdk"
	"github.com/spf13/cobra"
)

// policyFlags are the lifecycle flags of sbx create and sbx update.
type policyFlags struct {
	autoStop, autoPause, autoArchive, autoDelete, ttl string
	ephemeral, keepAlive, noImageEntrypoint           bool
	entrypoint, restart                               string
}

const durationHelp = `Durations are like 90s, 15m, 2h, 7d or 1d12h, or plain seconds; 0 turns
--auto-stop, --auto-pause and --ttl off, --auto-archive 0 means the maximum (30d), and
--auto-delete -1 (or never) never deletes.`

func addPolicyFlags(cmd *cobra.Command, create bool) *policyFlags {
	p := &policyFlags{}
	f := cmd.Flags()
	f.StringVar(&p.autoStop, "auto-stop", "", "stop after this long without activity (default 15m, class gvisor 0; 0: never)")
	f.StringVar(&p.autoPause, "auto-pause", "", "pause instead of stopping after this long without activity (default 0, class gvisor 1h; turns --auto-stop off)")
	f.StringVar(&p.autoArchive, "auto-archive", "", "archive after this long stopped (default 7d; 0: 30d)")
	f.StringVar(&p.autoDelete, "auto-delete", "", "delete after this long stopped (default never; 0: when it stops)")
	f.StringVar(&p.ttl, "ttl", "", "delete this long after now, in any state (0: no TTL)")
	f.BoolVar(&p.ephemeral, "ephemeral", false, "delete when it stops (--auto-delete 0)")
	f.BoolVar(&p.keepAlive, "keep-alive", false, "never stop for being idle")
	if create {
		f.StringVar(&p.entrypoint, "entrypoint", "", "main process, run with /bin/sh -c and supervised; the sandbox stops when it exits (default: the ENTRYPOINT/CMD of an image sbx built)")
		f.BoolVar(&p.noImageEntrypoint, "no-image-entrypoint", false, "run no main process even when the image (one sbx built) has an ENTRYPOINT/CMD")
		f.StringVar(&p.restart, "restart", "", "restart policy of the main process: never (default), on-failure, always")
	}
	return p
}

// applyCreate puts the flags given into a create request.
func (p *policyFlags) applyCreate(cmd *cobra.Command, req *sdk.CreateSandboxRequest) error {
	u, err := p.update(cmd)
	if err != nil {
		return err
	}
	req.AutoStopSeconds, req.AutoPauseSeconds = u.AutoStopSeconds, u.AutoPauseSeconds
	req.AutoArchiveSeconds, req.AutoDeleteSeconds = u.AutoArchiveSeconds, u.AutoDeleteSeconds
	if u.TTLSeconds != nil {
		req.TTLSeconds = *u.TTLSeconds
	}
	req.Ephemeral, req.KeepAlive = p.ephemeral, p.keepAlive
	if p.entrypoint != "" {
		req.Entrypoint = []string{"/bin/sh", "-c", p.entrypoint}
	}
	req.RestartPolicy = p.restart
	req.IgnoreImageEntrypoint = p.noImageEntrypoint
	return nil
}

// update returns the flags given as an update request.
func (p *policyFlags) update(cmd *cobra.Command) (sdk.UpdateSandboxRequest, error) {
	var u sdk.UpdateSandboxRequest
	changed := cmd.Flags().Changed
	for _, d := range []struct {
		flag, value string
		never       bool
		dst         **int
	}{
		{"auto-stop", p.autoStop, false, &u.AutoStopSeconds},
		{"auto-pause", p.autoPause, false, &u.AutoPauseSeconds},
		{"auto-archive", p.autoArchive, false, &u.AutoArchiveSeconds},
		{"auto-delete", p.autoDelete, true, &u.AutoDeleteSeconds},
		{"ttl", p.ttl, false, &u.TTLSeconds},
	} {
		if !changed(d.flag) {
			continue
		}
		n, err := parsePolicyDuration(d.value, d.never)
		if err != nil {
			return u, usagef("--%s: %v", d.flag, err)
		}
		*d.dst = &n
	}
	if changed("ephemeral") {
		u.Ephemeral = &p.ephemeral
	}
	if changed("keep-alive") {
		u.KeepAlive = &p.keepAlive
	}
	return u, nil
}

// parsePolicyDuration reads "15m", "7d", "1d12h", "900" or, with never,
// "-1"/"never", into seconds.
func parsePolicyDuration(s string, never bool) (int, error) {
	s = strings.TrimSpace(s)
	if never && (s == "-1" || s == "never") {
		return -1, nil
	}
	if s == "off" {
		return 0, nil
	}
	if n, err := strconv.Atoi(s); err == nil && n >= 0 {
		return n, nil
	}
	var total time.Duration
	rest := s
	if days, after, ok := strings.Cut(s, "d"); ok {
		n, err := strconv.Atoi(days)
		if err != nil || n < 0 {
			return 0, fmt.Errorf("%q is not a duration such as 15m, 2h or 7d", s)
		}
		total, rest = time.Duration(n)*24*time.Hour, after
	}
	if rest != "" {
		d, err := time.ParseDuration(rest)
		if err != nil || d < 0 {
			return 0, fmt.Errorf("%q is not a duration such as 15m, 2h or 7d", s)
		}
		total += d
	}
	if total%time.Second != 0 {
		return 0, fmt.Errorf("%q is not a whole number of seconds", s)
	}
	return int(total / time.Second), nil
}

func newUpdateCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "update NAME [--auto-stop D | --auto-pause D] [--auto-archive D] [--auto-delete D] [--ttl D] [--ephemeral] [--keep-alive] [--env K=V] [--unset-env K] [--cpu N] [--memory MIB] [--pids N] [--label K=V]",
		Short: "Change a sandbox's lifecycle policy, environment, limits or labels",
		Long: `Change when a sandbox is stopped, paused, archived or deleted on its own. Flags
left out keep their value. An idle sandbox is either stopped or paused: setting one
of --auto-stop and --auto-pause turns the other off. Setting --ttl starts the TTL
afresh from now. --env and --unset-env change the environment of every process
started from now on, in this instance and the next; running processes keep theirs.
--cpu, --memory (MiB) and --pids change the limits: at once, without a restart, for
a running sandbox of class container (a memory limit below what it uses now is
refused), and from the next start for a stopped one or class gvisor. --label
replaces all of the sandbox's labels with the ones given.
` + durationHelp,
		Example: `  sbx update box --auto-stop 1h
  sbx update box --auto-pause 10m
  sbx update box --keep-alive
  sbx update box --keep-alive=false --ttl 2h
  sbx update box --auto-delete never -o json
  sbx update box --env API_URL=http://10.0.0.1 --unset-env DEBUG
  sbx update box --cpu 2 --memory 1024 --pids 512 --label team=ml`,
		Args: exactArgs(1, "exactly one NAME"),
	}
	out := addOutputFlag(cmd)
	pf := addPolicyFlags(cmd, false)
	var setEnv, unsetEnv []string
	cmd.Flags().StringArrayVar(&setEnv, "env", nil, "set an environment variable KEY=VALUE for processes started from now on (repeatable)")
	cmd.Flags().StringArrayVar(&unsetEnv, "unset-env", nil, "unset an environment variable KEY (repeatable)")
	lf := addLimitFlags(cmd)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		req, err := pf.update(cmd)
		if err != nil {
			return err
		}
		if req.Env, err = envChange(setEnv, unsetEnv); err != nil {
			return err
		}
		if err := lf.apply(cmd, &req); err != nil {
			return err
		}
		return sandboxCall(g, out, cmd, func(c *sdk.Client) (*sdk.Sandbox, error) {
			return c.UpdateSandbox(cmd.Context(), args[0], req)
		})
	}
	return cmd
}

func newArchiveCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "archive NAME",
		Short: "Archive a stopped sandbox's files into the blob store",
		Long: `Pack a stopped sandbox's own files into the daemon's blob store and free
them from local disk. The next start, or any command run in it, restores them.`,
		Example: `  sbx stop box && sbx archive box`,
		Args:    exactArgs(1, "exactly one NAME"),
	}
	out := addOutputFlag(cmd)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		return sandboxCall(g, out, cmd, func(c *sdk.Client) (*sdk.Sandbox, error) {
			return c.ArchiveSandbox(cmd.Context(), args[0])
		})
	}
	return cmd
}

func newWaitCmd(g *globals) *cobra.Command {
	var (
		state   string
		timeout time.Duration
	)
	cmd := &cobra.Command{
		Use:   "wait NAME [--state STATE] [--timeout D]",
		Short: "Wait until a sandbox is in a state",
		Long: `Wait until a sandbox is in a state (default started): started, stopped,
archived, deleted, … It fails when the timeout passes first.`,
		Example: `  sbx wait box
  sbx wait box --state stopped --timeout 20m`,
		Args: exactArgs(1, "exactly one NAME"),
	}
	out := addOutputFlag(cmd)
	cmd.Flags().StringVar(&state, "state", string(sdk.StateStarted), "the state to wait for")
	cmd.Flags().DurationVar(&timeout, "timeout", time.Minute, "how long to wait")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if timeout <= 0 {
			return usagef("--timeout must be positive")
		}
		return sandboxCall(g, out, cmd, func(c *sdk.Client) (*sdk.Sandbox, error) {
			// The daemon waits at most an hour per request; wait again for longer.
			deadline := time.Now().Add(timeout)
			for {
				left := time.Until(deadline)
				sb, err := c.WaitForState(cmd.Context(), args[0], sdk.State(state), min(left, time.Hour))
				if err == nil || !sdk.IsWaitTimeout(err) || left <= time.Hour {
					return sb, err
				}
			}
		})
	}
	return cmd
}

func newEventsCmd(g *globals) *cobra.Command {
	var follow bool
	cmd := &cobra.Command{
		Use:   "events [NAME] [-f]",
		Short: "Show the state changes of a sandbox, or of all",
		Long: `Show what happened to a sandbox: every state change with its time and reason
(user, idle, ttl, auto-archive, auto-delete, lazy, main-exit, oom, crash, …).
Without NAME, the events of all sandboxes, deletions included. -f keeps
following new events.`,
		Example: `  sbx events box
  sbx events box -f
  sbx events -o json`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 1 {
				return usagef("sbx events takes at most one NAME (got %d arguments)", len(args))
			}
			return nil
		},
	}
	out := addOutputFlag(cmd)
	cmd.Flags().BoolVarP(&follow, "follow", "f", false, "keep printing events as they happen")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if err := out.check(); err != nil {
			return err
		}
		name := ""
		if len(args) == 1 {
			name = args[0]
		}
		c, err := g.client()
		if err != nil {
			return err
		}
		w := cmd.OutOrStdout()
		if !follow {
			evs, err := c.ListEvents(cmd.Context(), name, sdk.EventOptions{})
			if err != nil {
				return err
			}
			if evs == nil {
				evs = []sdk.Event{}
			}
			return out.print(w, evs, func(w io.Writer) error { return printEvents(w, evs, name == "") })
		}
		if out.format == "json" {
			return c.FollowEvents(cmd.Context(), name, sdk.EventOptions{}, func(e sdk.Event) error { return writeJSONLine(w, e) })
		}
		return c.FollowEvents(cmd.Context(), name, sdk.EventOptions{}, func(e sdk.Event) error {
			_, err := fmt.Fprintln(w, eventLine(e, name == ""))
			return err
		})
	}
	return cmd
}

func printEvents(w io.Writer, evs []sdk.Event, all bool) error {
	for _, e := range evs {
		if _, err := fmt.Fprintln(w, eventLine(e, all)); err != nil {
			return err
		}
	}
	return nil
}

// eventLine is one event as a line: time, [sandbox,] state, reason, message.
func eventLine(e sdk.Event, all bool) string {
	var b strings.Builder
	b.WriteString(e.Time.Local().Format("2006-01-02 15:04:05.000"))
	if all {
		b.WriteString("  " + orDash(e.SandboxName) + " " + e.SandboxID)
	}
	fmt.Fprintf(&b, "  %-9s %s", e.State, orDash(e.Reason))
	if e.Message != "" {
		b.WriteString("  " + e.Message)
	}
	return b.String()
}

func writeJSONLine(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

func newLogsCmd(g *globals) *cobra.Command {
	var (
		follow, stamps bool
		tail, since    string
	)
	cmd := &cobra.Command{
		Use:   "logs NAME [PROCESS] [-f]",
		Short: "Show the output of a sandbox's main process, or of a background process",
		Long: `Show the output of the sandbox's main process (its --entrypoint), stdout and
stderr together, kept on the host across stops; or, with PROCESS, of a
background process. -f keeps following; following keeps the sandbox active.
--tail, --since and --timestamps apply to the main process's output; the
daemon selects it.`,
		Example: `  sbx logs web
  sbx logs web -f --tail 20
  sbx logs web --since 5m --timestamps
  sbx logs web build-1 -f`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) < 1 || len(args) > 2 {
				return usagef("sbx logs takes NAME and an optional PROCESS (got %d arguments)", len(args))
			}
			return nil
		},
	}
	cmd.Flags().BoolVarP(&follow, "follow", "f", false, "keep printing new output")
	cmd.Flags().StringVarP(&tail, "tail", "n", "all", "show only the last N lines of the kept output")
	cmd.Flags().StringVar(&since, "since", "", "show only output written since then: a duration back (5m, 1h30m) or an RFC 3339 time")
	cmd.Flags().BoolVarP(&stamps, "timestamps", "t", false, "prefix each line with when it was written (RFC 3339, UTC)")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		opts := sdk.MainLogsOptions{Follow: follow, Timestamps: stamps}
		if tail != "all" {
			n, err := strconv.Atoi(tail)
			if err != nil || n < 0 {
				return usagef("--tail takes a number of lines or all, not %q", tail)
			}
			opts.Tail = &n
		}
		if since != "" {
			t, err := parseSince(since)
			if err != nil {
				return err
			}
			opts.Since = t
		}
		if len(args) == 2 {
			for _, f := range []string{"tail", "since", "timestamps"} {
				if cmd.Flags().Changed(f) {
					return usagef("--%s applies to the main process's output, not to a background process's", f)
				}
			}
		}
		c, err := g.client()
		if err != nil {
			return err
		}
		ctx := cmd.Context()
		if len(args) == 2 {
			_, err := c.ProcessLogs(ctx, args[0], args[1], sdk.LogsOptions{Follow: follow}, cmd.OutOrStdout(), cmd.ErrOrStderr())
			return err
		}
		out := &stampWriter{w: cmd.OutOrStdout(), lineStart: true}
		return c.MainLogChunks(ctx, args[0], opts, out.write)
	}
	return cmd
}

// parseSince reads --since: a duration back from now or an RFC 3339 time.
func parseSince(v string) (time.Time, error) {
	if d, err := time.ParseDuration(v); err == nil && d >= 0 {
		return now().Add(-d), nil
	}
	if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
		return t, nil
	}
	return time.Time{}, usagef("--since takes a duration back from now (5m, 1h30m) or an RFC 3339 time, not %q", v)
}

// stampWriter writes log chunks, with each line's write time before it
// when the chunk has one (docker logs --timestamps' format).
type stampWriter struct {
	w         io.Writer
	lineStart bool
}

func (s *stampWriter) write(data []byte, at *time.Time) error {
	if at == nil {
		_, err := s.w.Write(data)
		return err
	}
	stamp := []byte(at.UTC().Format("2006-01-02T15:04:05.000000000Z") + " ")
	var b []byte
	for len(data) > 0 {
		if s.lineStart {
			b = append(b, stamp...)
		}
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line = data[:i+1]
		}
		b = append(b, line...)
		data = data[len(line):]
		s.lineStart = line[len(line)-1] == '\n'
	}
	_, err := s.w.Write(b)
	return err
}

// lifecycleLines adds a sandbox's policy and deadline to `sbx get`.
func lifecycleLines(line func(k, v string), sb *sdk.Sandbox) {
	policy := []string{"auto-stop " + secondsText(sb.AutoStopSeconds, "never")}
	switch {
	case sb.KeepAlive:
		policy[0] = "keep-alive"
	case sb.AutoPauseSeconds > 0:
		policy[0] = "auto-pause " + secondsText(sb.AutoPauseSeconds, "")
	}
	policy = append(policy, "auto-archive "+secondsText(sb.AutoArchiveSeconds, "never"))
	if sb.Ephemeral {
		policy = append(policy, "ephemeral")
	} else {
		policy = append(policy, "auto-delete "+secondsText(sb.AutoDeleteSeconds, "at stop"))
	}
	if sb.TTLSeconds > 0 {
		policy = append(policy, "ttl "+secondsText(sb.TTLSeconds, ""))
	}
	line("Policy", strings.Join(policy, ", "))
	if len(sb.Entrypoint) > 0 {
		line("Entrypoint", strings.Join(sb.Entrypoint, " ")+" (restart "+orDash(sb.RestartPolicy)+")")
	}
	if sb.LastActivityAt != nil {
		line("Last activity", formatTime(sb.LastActivityAt))
	}
	if sb.ExpiresAt != nil {
		line("Next", sb.ExpiresAction+" at "+sb.ExpiresAt.Local().Format(time.RFC3339)+" ("+until(*sb.ExpiresAt)+")")
	}
}

// secondsText shows a policy duration; 0 (or -1 for auto-delete) as zero.
func secondsText(n int, zero string) string {
	switch {
	case n == -1:
		return "never"
	case n == 0 && zero != "":
		return zero
	}
	d := time.Duration(n) * time.Second
	if d%(24*time.Hour) == 0 {
		return strconv.Itoa(int(d/(24*time.Hour))) + "d"
	}
	return strings.TrimSuffix(strings.TrimSuffix(d.String(), "0s"), "0m")
}

// until says how far away t is, coarsely.
func until(t time.Time) string {
	d := t.Sub(now())
	switch {
	case d <= 0:
		return "due"
	case d < time.Minute:
		return fmt.Sprintf("in %ds", int(d/time.Second))
	case d < time.Hour:
		return fmt.Sprintf("in %dm", int(d/time.Minute))
	case d < 48*time.Hour:
		return fmt.Sprintf("in %dh", int(d/time.Hour))
	}
	return fmt.Sprintf("in %dd", int(d/(24*time.Hour)))
}

// envChange turns --env K=V and --unset-env K into an update's env.
func envChange(set, unset []string) (map[string]*string, error) {
	kv, err := parseKV("--env", set)
	if err != nil || len(kv)+len(unset) == 0 {
		return nil, err
	}
	change := make(map[string]*string, len(kv)+len(unset))
	for k, v := range kv {
		change[k] = &v
	}
	for _, k := range unset {
		if _, both := change[k]; both || k == "" {
			return nil, usagef("--unset-env %q: name a variable once, not also in --env", k)
		}
		change[k] = nil
	}
	return change, nil
}
