package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/sbxhq/sbx/internal/image"
	"github.com/sbxhq/sbx/sdk"
	"github.com/spf13/cobra"
)

func newImageCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "image COMMAND",
		Short: "Manage the images sandboxes start from",
		Long: `Manage images: the read-only layers a sandbox starts from. Import one from a
directory or tarball on this machine, or pull one from a registry.`,
		Example: `  sbx image pull alpine:3.20 --name alpine
  sbx image import mybase ./rootfs
  sbx image ls
  sbx image rm mybase`,
		Args: noSubcommand,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newImageImportCmd(g), newImagePullCmd(g), newImageListCmd(g), newImageRemoveCmd(g),
		newImageBuildCmd(g)) // image_build.go
	return cmd
}

func newImageImportCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "import NAME PATH",
		Short: "Import an image from a directory or tarball",
		Long: `Import an image called NAME from PATH, which is one of:
  - a directory holding a root filesystem, or an OCI image layout directory;
  - a tarball of a root filesystem, of an OCI image layout, or from docker save
    (plain, gzip or zstd);
  - "-" to read such a tarball from stdin.
A directory is streamed to the daemon as a tar archive; nothing is staged on disk.`,
		Example: `  sbx image import mybase ./rootfs
  sbx image import alpine ./alpine-minirootfs.tar.gz
  docker save python:3.12 | sbx image import python -`,
		Args: exactArgs(2, "NAME and PATH"),
	}
	out := addOutputFlag(cmd)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if err := out.check(); err != nil {
			return err
		}
		c, err := g.client()
		if err != nil {
			return err
		}
		img, err := importImage(cmd.Context(), c, args[0], args[1], cmd.InOrStdin())
		if err != nil {
			return err
		}
		return out.print(cmd.OutOrStdout(), img, func(w io.Writer) error { return printImage(w, img) })
	}
	return cmd
}

func importImage(ctx context.Context, c *sdk.Client, name, src string, stdin io.Reader) (*sdk.Image, error) {
	if src == "-" {
		return c.ImportImage(ctx, name, stdin)
	}
	st, err := os.Stat(src)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		f, err := os.Open(src)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		return c.ImportImage(ctx, name, f)
	}
	// Tar the directory straight into the request body. The tar error is
	// sent before the pipe is closed, so when TarDir fails the failed request
	// can be explained by it rather than by a vague broken-body error.
	pr, pw := io.Pipe()
	tarErr := make(chan error, 1)
	go func() {
		err := image.TarDir(pw, src)
		tarErr <- err
		pw.CloseWithError(err)
	}()
	img, err := c.ImportImage(ctx, name, pr)
	select {
	case terr := <-tarErr:
		if terr != nil {
			return nil, fmt.Errorf("tar %s: %w", src, terr)
		}
	default:
		// The request ended before the tar did (the daemon refused the
		// import); unblock TarDir and let it wind down.
		pr.CloseWithError(errors.New("import request ended"))
		<-tarErr
	}
	return img, err
}

func newImagePullCmd(g *globals) *cobra.Command {
	var name string
	cmd := &cobra.Command{
		Use:   "pull REF [--name NAME]",
		Short: "Pull an image from a registry",
		Long: `Pull the image REF from an OCI registry (Docker Hub when REF names no
registry) and store it as --name, or as REF when no name is given.`,
		Example: `  sbx image pull alpine:3.20
  sbx image pull ghcr.io/org/tools:v1 --name tools`,
		Args: exactArgs(1, "exactly one REF"),
	}
	out := addOutputFlag(cmd)
	cmd.Flags().StringVar(&name, "name", "", "name to store the image under (default REF)")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if err := out.check(); err != nil {
			return err
		}
		c, err := g.client()
		if err != nil {
			return err
		}
		img, err := c.PullImage(cmd.Context(), args[0], name)
		if err != nil {
			return err
		}
		return out.print(cmd.OutOrStdout(), img, func(w io.Writer) error { return printImage(w, img) })
	}
	return cmd
}

func newImageListCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "ls",
		Aliases: []string{"list"},
		Short:   "List images",
		Long:    `List the images sandboxes can start from.`,
		Example: `  sbx image ls
  sbx image ls -o json`,
		Args: exactArgs(0, "no arguments"),
	}
	out := addOutputFlag(cmd)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		return listPrint(g, out, cmd, func(c *sdk.Client) ([]sdk.Image, error) { return c.ListImages(cmd.Context()) }, printImages)
	}
	return cmd
}

func newImageRemoveCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:     "rm NAME…",
		Aliases: []string{"delete"},
		Short:   "Remove images",
		Long: `Remove images. An image that a sandbox still uses cannot be removed: delete
those sandboxes first. Each NAME is removed in turn; a failure is reported and
the rest still go.`,
		Example: `  sbx image rm mybase
  sbx image rm old1 old2`,
		Args: minArgs(1, "at least one image NAME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return deleteEach(g, cmd, args, func(c *sdk.Client, name string) error {
				return c.RemoveImage(cmd.Context(), name)
			})
		},
	}
}
