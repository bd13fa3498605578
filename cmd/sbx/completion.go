package main

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/sbxhq/sbx/sdk"
	"github.com/spf13/cobra"
)

// Shell completion: cobra's own `sbx completion bash|zsh|fish|powershell`
// writes the script, which calls back into `sbx __complete`; the functions
// here answer it with the names the daemon knows.

// nameKind is what a command's arguments name.
type nameKind int

const (
	sandboxNames nameKind = iota
	imageNames
	snapshotNames
	volumeNames
)

// nameArgs says which commands take which names: first the first argument
// only, every the arguments all. Subcommands whose first argument is
// SANDBOX in their usage complete sandbox names without being listed.
var nameArgs = map[string]struct {
	kind  nameKind
	every bool
}{
	"archive": {kind: sandboxNames}, "events": {kind: sandboxNames}, "exec": {kind: sandboxNames},
	"get": {kind: sandboxNames}, "kill": {kind: sandboxNames}, "logs": {kind: sandboxNames},
	"pause": {kind: sandboxNames}, "ps": {kind: sandboxNames}, "resume": {kind: sandboxNames},
	"start": {kind: sandboxNames}, "stop": {kind: sandboxNames}, "term": {kind: sandboxNames},
	"update": {kind: sandboxNames}, "wait": {kind: sandboxNames}, "watch": {kind: sandboxNames},
	"run": {kind: sandboxNames}, "ctx create": {kind: sandboxNames}, "ctx ls": {kind: sandboxNames},
	"ctx rm": {kind: sandboxNames}, "ctx run": {kind: sandboxNames},
	"rm": {kind: sandboxNames, every: true}, "stats": {kind: sandboxNames, every: true},
	"image rm":     {kind: imageNames, every: true},
	"snapshot get": {kind: snapshotNames}, "snapshot rm": {kind: snapshotNames, every: true},
	"volume get": {kind: volumeNames}, "volume rm": {kind: volumeNames, every: true},
}

// nameFlags are flags that take a name.
var nameFlags = map[string]map[string]nameKind{
	"create": {"image": imageNames, "snapshot": snapshotNames},
	"run":    {"image": imageNames},
}

// addCompletions sets the completion of names on root's commands.
func addCompletions(root *cobra.Command, g *globals) {
	var walk func(cmd *cobra.Command)
	walk = func(cmd *cobra.Command) {
		path := strings.TrimPrefix(cmd.CommandPath(), root.Name()+" ")
		if a, ok := nameArgs[path]; ok {
			cmd.ValidArgsFunction = g.completeNames(a.kind, a.every)
		} else if words := strings.Fields(cmd.Use); cmd.HasParent() && cmd.Parent() != root &&
			len(words) > 1 && words[1] == "SANDBOX" && cmd.ValidArgsFunction == nil {
			cmd.ValidArgsFunction = g.completeNames(sandboxNames, false)
		}
		for flag, kind := range nameFlags[path] {
			if cmd.Flags().Lookup(flag) != nil {
				cmd.RegisterFlagCompletionFunc(flag, g.completeNames(kind, true))
			}
		}
		for _, sub := range cmd.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// completeNames answers a completion with the names of kind the daemon
// has, leaving out those already typed. Without a daemon it offers none.
func (g *globals) completeNames(kind nameKind, every bool) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		if !every && len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		c, err := g.client()
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		ctx, cancel := context.WithTimeout(cmd.Context(), 5*time.Second)
		defer cancel()
		names, err := listNames(ctx, c, kind)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		var out []string
		for _, n := range names {
			if strings.HasPrefix(n, toComplete) && !slices.Contains(args, n) {
				out = append(out, n)
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

func listNames(ctx context.Context, c *sdk.Client, kind nameKind) ([]string, error) {
	var names []string
	switch kind {
	case sandboxNames:
		list, err := c.ListSandboxes(ctx, sdk.ListOptions{})
		for _, sb := range list {
			names = append(names, firstNonEmpty(sb.Name, sb.ID))
		}
		return names, err
	case imageNames:
		list, err := c.ListImages(ctx)
		for _, im := range list {
			names = append(names, im.Name)
		}
		return names, err
	case snapshotNames:
		list, err := c.ListSnapshots(ctx)
		for _, s := range list {
			names = append(names, s.Name)
		}
		return names, err
	default:
		list, err := c.ListVolumes(ctx)
		for _, v := range list {
			names = append(names, v.Name)
		}
		return names, err
	}
}
