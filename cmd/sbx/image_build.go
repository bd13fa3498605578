package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/sbxhq/sbx/internal/dirtar"
	"github.com/sbxhq/sbx/sdk"
	"github.com/spf13/cobra"
)

func newImageBuildCmd(g *globals) *cobra.Command {
	var (
		file    string
		args    []string
		noCache bool
		timeout time.Duration
		quiet   bool
	)
	cmd := &cobra.Command{
		Use:   "build NAME [CONTEXT] [-f Dockerfile]",
		Short: "Build an image from a Dockerfile",
		Long: `Build the image NAME from a Dockerfile. CONTEXT (default ".") is the directory
COPY and ADD take files from; it is sent to the daemon as a tar stream. The
Dockerfile (-f, default CONTEXT/Dockerfile) must be inside CONTEXT.

Supported: FROM (an image sbx has: sbx image ls; any other is pulled from its
registry first), RUN (in a build sandbox with the default egress policy and
limits), COPY and ADD from the context (ADD unpacks a local .tar/.tar.gz; no
URLs), ENV, ARG, WORKDIR, USER, ENTRYPOINT, CMD, LABEL. ENTRYPOINT + CMD become
the main process of sandboxes created from the image without --entrypoint (or
--no-image-entrypoint). Anything else (HEALTHCHECK, RUN --mount, multi-stage builds, …) is
refused with its line. Each RUN, COPY and ADD makes a layer, cached: a step
whose inputs did not change is not run again ("cached" in the progress).
A failed RUN prints its exit code and output; no image is stored.`,
		Example: `  sbx image build myapp .
  sbx image build myapp ./app -f ./app/Dockerfile.dev --build-arg VERSION=2
  sbx create box --image myapp`,
		Args: func(cmd *cobra.Command, a []string) error {
			if len(a) < 1 || len(a) > 2 {
				return usagef("%s takes NAME and optionally CONTEXT (got %d arguments)", cmd.CommandPath(), len(a))
			}
			return nil
		},
	}
	out := addOutputFlag(cmd)
	cmd.Flags().StringVarP(&file, "file", "f", "", "the Dockerfile (default CONTEXT/Dockerfile)")
	cmd.Flags().StringArrayVar(&args, "build-arg", nil, "NAME=VALUE for an ARG; repeat for several")
	cmd.Flags().BoolVar(&noCache, "no-cache", false, "run every step even when the cache has it")
	cmd.Flags().DurationVar(&timeout, "timeout", 0, "give up after this long (default 30m)")
	cmd.Flags().BoolVarP(&quiet, "quiet", "q", false, "print no progress")
	cmd.RunE = func(cmd *cobra.Command, a []string) error {
		if err := out.check(); err != nil {
			return err
		}
		ctxDir := "."
		if len(a) == 2 {
			ctxDir = a[1]
		}
		if fi, err := os.Stat(ctxDir); err != nil || !fi.IsDir() {
			return usagef("the build context %s is not a directory", ctxDir)
		}
		opts := sdk.BuildOptions{NoCache: noCache, TimeoutSeconds: int(timeout / time.Second), BuildArgs: map[string]string{}}
		if file != "" {
			absCtx, _ := filepath.Abs(ctxDir)
			absFile, _ := filepath.Abs(file)
			rel, err := filepath.Rel(absCtx, absFile)
			if err != nil || strings.HasPrefix(rel, "..") {
				return usagef("the Dockerfile %s is not inside the build context %s", file, ctxDir)
			}
			opts.Dockerfile = filepath.ToSlash(rel)
		}
		for _, kv := range args {
			k, v, ok := strings.Cut(kv, "=")
			if !ok || k == "" {
				return usagef("--build-arg %q is not NAME=VALUE", kv)
			}
			opts.BuildArgs[k] = v
		}
		c, err := g.client()
		if err != nil {
			return err
		}
		pr, pw := io.Pipe()
		go func() { pw.CloseWithError(dirtar.Write(pw, ctxDir)) }()
		defer pr.Close()
		progress := cmd.ErrOrStderr()
		img, err := c.BuildImage(cmd.Context(), a[0], pr, opts, func(ev sdk.BuildEvent) {
			if !quiet {
				printBuildEvent(progress, ev)
			}
		})
		if err != nil {
			return err
		}
		return out.print(cmd.OutOrStdout(), img, func(w io.Writer) error { return printImage(w, img) })
	}
	return cmd
}

func printBuildEvent(w io.Writer, ev sdk.BuildEvent) {
	switch ev.Type {
	case "step":
		cached := ""
		if ev.Cached {
			cached = " (cached)"
		}
		fmt.Fprintf(w, "step %d/%d: %s%s\n", ev.Step, ev.Total, ev.Instruction, cached)
	case "output":
		io.WriteString(w, ev.Data)
	case "pull": // FROM an image sbx did not have
		fmt.Fprintln(w, ev.Data)
	case "error":
		if ev.Output != "" {
			fmt.Fprintf(w, "--- output of the failed step (exit code %d) ---\n%s", ev.ExitCode, ev.Output)
			if !strings.HasSuffix(ev.Output, "\n") {
				fmt.Fprintln(w)
			}
		}
	}
}
