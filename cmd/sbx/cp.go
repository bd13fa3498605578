package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/sbxhq/sbx/sdk"
	"github.com/spf13/cobra"
)

// copyFlags are sbx cp's options.
type copyFlags struct {
	recursive bool // copy directories (as a tar stream)
	parents   bool // make missing parent directories in the sandbox
}

func newCopyCmd(g *globals) *cobra.Command {
	var f copyFlags
	cmd := &cobra.Command{
		Use:   "cp [-r] SRC DST",
		Short: "Copy a file or directory between this machine and a sandbox",
		Long: `Copy a file, or with -r a directory, into or out of a sandbox. Exactly one
of SRC and DST is a sandbox path, written NAME:PATH; the other is a local
path, or "-" for stdin (as SRC) or stdout (as DST). A local path that
contains ':' must start with "./" or "/" so it is not read as NAME:PATH.

When DST is an existing directory (or ends in "/") the file or directory
keeps its base name inside it, as with cp. Uploads keep the local file's
permission bits and make missing parent directories in the sandbox
(--parents=false refuses instead). With -r, directories travel as a tar
stream: "-" reads or writes that tar, and a tar whose names are absolute,
climb out with "..", or lie below a symlink is refused whole.`,
		Example: `  sbx cp ./main.py box:/workspace/main.py
  sbx cp ./data.csv box:/workspace/
  sbx cp box:/workspace/out.json .
  sbx cp box:/var/log/app.log - | less
  sbx cp -r ./src box:/workspace/
  sbx cp -r box:/workspace/results ./results
  tar -czf - -C ./src . | sbx cp -r - box:/workspace/src`,
		Args: exactArgs(2, "SRC and DST"),
		RunE: func(cmd *cobra.Command, args []string) error {
			src, dst := parseCopyArg(args[0]), parseCopyArg(args[1])
			if err := checkCopyArgs(src, dst); err != nil {
				return err
			}
			c, err := g.client()
			if err != nil {
				return err
			}
			if dst.remote() {
				return upload(cmd.Context(), c, src.path, dst, cmd.InOrStdin(), f)
			}
			return download(cmd.Context(), c, src, dst.path, cmd.OutOrStdout(), f)
		},
	}
	cmd.Flags().BoolVarP(&f.recursive, "recursive", "r", false, "copy directories")
	cmd.Flags().BoolVar(&f.parents, "parents", true, "make missing parent directories in the sandbox")
	return cmd
}

// copyArg is one side of sbx cp: local when sandbox is empty.
type copyArg struct {
	sandbox string
	path    string
}

func (a copyArg) remote() bool { return a.sandbox != "" }

// parseCopyArg splits NAME:PATH. As with docker cp, an argument that starts
// with "/" or "." or has no ':' before its first '/' is local, so "./a:b"
// and "dir/a:b" name local files.
func parseCopyArg(s string) copyArg {
	if s == "-" || strings.HasPrefix(s, "/") || strings.HasPrefix(s, ".") {
		return copyArg{path: s}
	}
	name, p, ok := strings.Cut(s, ":")
	if !ok || name == "" || strings.Contains(name, "/") {
		return copyArg{path: s} // no sandbox name can be empty or hold '/'
	}
	return copyArg{sandbox: name, path: p}
}

func checkCopyArgs(src, dst copyArg) error {
	switch {
	case src.remote() && dst.remote():
		return usagef("both SRC and DST are sandbox paths; copy to a local file first, then on to the other sandbox")
	case !src.remote() && !dst.remote():
		return usagef("neither SRC nor DST is a sandbox path; write one as NAME:/path, e.g. box:/workspace/file")
	}
	for _, a := range []copyArg{src, dst} {
		if a.remote() && a.path == "" {
			return usagef("%q has no path after the ':'; write NAME:/path, e.g. %s:/workspace/file", a.sandbox+":", a.sandbox)
		}
		if !a.remote() && a.path == "" {
			return usagef("the local path is empty; give a file name or \"-\"")
		}
	}
	return nil
}

func upload(ctx context.Context, c *sdk.Client, local string, dst copyArg, stdin io.Reader, f copyFlags) error {
	opts := []sdk.FileOption{sdk.WithParents()}
	if !f.parents {
		opts = []sdk.FileOption{sdk.WithoutParents()}
	}
	if f.recursive {
		if local == "-" {
			_, err := c.UploadTar(ctx, dst.sandbox, dst.path, stdin, opts...)
			return err
		}
		if fi, err := os.Stat(local); err != nil {
			return err
		} else if fi.IsDir() {
			target, err := remoteDirTarget(ctx, c, dst, filepath.Base(local))
			if err != nil {
				return err
			}
			_, err = c.UploadDir(ctx, dst.sandbox, local, target, opts...)
			return err
		}
	}
	var (
		r    io.Reader
		mode os.FileMode
		base string
	)
	if local == "-" {
		r = stdin
	} else {
		f, err := os.Open(local)
		if err != nil {
			return err
		}
		defer f.Close()
		fi, err := f.Stat()
		if err != nil {
			return err
		}
		if fi.IsDir() {
			return fmt.Errorf("%s is a directory: copy it with -r (sbx cp -r %s %s:%s)", local, local, dst.sandbox, dst.path)
		}
		r, mode, base = f, fi.Mode().Perm(), filepath.Base(local)
	}
	target, err := remoteTarget(ctx, c, dst, base)
	if err != nil {
		return err
	}
	_, err = c.Upload(ctx, dst.sandbox, target, r, mode, opts...)
	return err
}

// remoteDirTarget is where a directory named base lands for DST, as with
// cp -r: inside DST when DST is an existing directory (or ends in "/"),
// else DST itself.
func remoteDirTarget(ctx context.Context, c *sdk.Client, dst copyArg, base string) (string, error) {
	if strings.HasSuffix(dst.path, "/") {
		return path.Join(dst.path, base), nil
	}
	fi, err := c.StatFile(ctx, dst.sandbox, dst.path)
	switch {
	case err == nil && fi.Type == "dir":
		return path.Join(dst.path, base), nil
	case err == nil:
		return "", fmt.Errorf("%s:%s exists and is not a directory", dst.sandbox, dst.path)
	case sdk.IsNotFound(err):
		return dst.path, nil
	}
	return "", err
}

// remoteTarget resolves a destination that is a directory in the sandbox to
// the file base inside it.
func remoteTarget(ctx context.Context, c *sdk.Client, dst copyArg, base string) (string, error) {
	isDir := strings.HasSuffix(dst.path, "/")
	if !isDir {
		fi, err := c.StatFile(ctx, dst.sandbox, dst.path)
		switch {
		case err == nil:
			isDir = fi.Type == "dir"
		case !sdk.IsNotFound(err):
			return "", err
		}
	}
	if !isDir {
		return dst.path, nil
	}
	if base == "" {
		return "", fmt.Errorf("%s:%s is a directory; give the file name to write stdin to", dst.sandbox, dst.path)
	}
	return path.Join(dst.path, base), nil
}

func download(ctx context.Context, c *sdk.Client, src copyArg, local string, stdout io.Writer, f copyFlags) error {
	fi, err := c.StatFile(ctx, src.sandbox, src.path)
	if err != nil {
		return err
	}
	if fi.Type == "symlink" && f.recursive {
		// As cp -r does for a named link: copy what it points to.
		if list, err := c.ListFiles(ctx, src.sandbox, src.path); err == nil && list != nil {
			fi.Type = "dir"
		}
	}
	if fi.Type == "dir" {
		if !f.recursive {
			return fmt.Errorf("%s:%s is a directory: copy it with -r (sbx cp -r %s:%s %s)", src.sandbox, src.path, src.sandbox, src.path, local)
		}
		if local == "-" {
			rc, err := c.DownloadTar(ctx, src.sandbox, src.path)
			if err != nil {
				return err
			}
			defer rc.Close()
			_, err = io.Copy(stdout, rc)
			return err
		}
		if st, err := os.Stat(local); err == nil && st.IsDir() || strings.HasSuffix(local, "/") {
			local = filepath.Join(local, path.Base(src.path))
		}
		return c.DownloadDir(ctx, src.sandbox, src.path, local)
	}
	rc, err := c.Download(ctx, src.sandbox, src.path)
	if err != nil {
		return err
	}
	defer rc.Close()
	if local == "-" {
		_, err := io.Copy(stdout, rc)
		return err
	}
	if st, err := os.Stat(local); (err == nil && st.IsDir()) || strings.HasSuffix(local, "/") {
		local = filepath.Join(local, path.Base(src.path))
	}
	mode := os.FileMode(0o644)
	if m, err := strconv.ParseUint(fi.Mode, 8, 32); err == nil {
		mode = os.FileMode(m).Perm()
	}
	return writeFileAtomic(local, rc, mode)
}

// writeFileAtomic writes r to name through a temporary file in the same
// directory, so a failed copy never leaves a half-written file behind.
func writeFileAtomic(name string, r io.Reader, mode os.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(name), "."+filepath.Base(name)+".sbx-*")
	if err != nil {
		return err
	}
	_, err = io.Copy(tmp, r)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp.Name(), mode)
	}
	if err == nil {
		err = os.Rename(tmp.Name(), name)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("write %s: %w", name, err)
	}
	return nil
}
