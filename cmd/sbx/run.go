package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/sbxhq/sbx/sdk"
	"github.com/spf13/cobra"
)

// runFlags are the flags shared by sbx run and sbx ctx run.
type runFlags struct {
	code    string
	timeout float64
	envs    []string
	save    string
	out     *outputFlag
}

func addRunFlags(cmd *cobra.Command) *runFlags {
	f := &runFlags{}
	fs := cmd.Flags()
	fs.StringVarP(&f.code, "code", "c", "", "the code to run (instead of FILE)")
	fs.Float64Var(&f.timeout, "timeout", 0, "interrupt the code after this many seconds (0: no limit)")
	fs.StringArrayVar(&f.envs, "env", nil, "environment variable KEY=VALUE for this run (repeatable)")
	fs.StringVar(&f.save, "save", "", "write images and HTML results into this directory")
	f.out = addOutputFlag(cmd)
	return f
}

// source returns the code: -c, else FILE, else stdin for "-".
func (f *runFlags) source(file string, stdin io.Reader) (string, error) {
	switch {
	case f.code != "" && file != "":
		return "", usagef("give the code with -c or as FILE, not both")
	case f.code != "":
		return f.code, nil
	case file == "":
		return "", usagef("give the code with -c CODE, as a FILE, or as - to read it from stdin")
	case file == "-":
		b, err := io.ReadAll(stdin)
		return string(b), err
	}
	b, err := os.ReadFile(file)
	return string(b), err
}

func (f *runFlags) check() error {
	if err := f.out.check(); err != nil {
		return err
	}
	if f.timeout < 0 {
		return usagef("--timeout must be 0 or more seconds, got %g", f.timeout)
	}
	return nil
}

// do runs the code through run (RunCode or Run) and prints the outcome:
// streamed output and results as text, or the whole result as JSON. The
// exit code is 0, 1 when the code raised an error, or 124 on a timeout.
func (f *runFlags) do(cmd *cobra.Command, run func(context.Context, *sdk.RunHandlers) (*sdk.RunResult, error)) error {
	stdout, stderr := cmd.OutOrStdout(), cmd.ErrOrStderr()
	if f.out.format == "json" {
		res, err := run(cmd.Context(), nil)
		if err != nil {
			return err
		}
		if err := writeJSON(stdout, res); err != nil {
			return err
		}
		return runExit(res)
	}
	n := 0
	var saveErr error
	res, err := run(cmd.Context(), &sdk.RunHandlers{
		Stdout: func(b []byte) { stdout.Write(b) },
		Stderr: func(b []byte) { stderr.Write(b) },
		Result: func(r sdk.CodeResult) {
			n++
			if err := f.printResult(stdout, stderr, n, r); err != nil && saveErr == nil {
				saveErr = err
			}
		},
	})
	if err != nil {
		return err
	}
	if saveErr != nil {
		return saveErr
	}
	if e := res.Error; e != nil {
		switch {
		case e.Traceback != "":
			fmt.Fprint(stderr, strings.TrimRight(e.Traceback, "\n")+"\n")
		case e.Value != "":
			fmt.Fprintf(stderr, "%s: %s\n", e.Name, e.Value)
		default:
			fmt.Fprintln(stderr, e.Name)
		}
	}
	if res.TimedOut {
		fmt.Fprintf(stderr, "sbx: the run timed out after %gs and was interrupted\n", f.timeout)
	}
	return runExit(res)
}

func runExit(res *sdk.RunResult) error {
	switch {
	case res.TimedOut:
		return &exitError{code: 124} // as timeout(1)
	case res.Error != nil:
		return &exitError{code: 1}
	}
	return nil
}

// printResult shows a rich result as text, and saves what text cannot show
// when --save is set.
func (f *runFlags) printResult(stdout, stderr io.Writer, n int, r sdk.CodeResult) error {
	files := []struct {
		ext  string
		data []byte
	}{{"png", r.PNG}, {"jpg", r.JPEG}, {"svg", []byte(r.SVG)}, {"html", []byte(r.HTML)}}
	for _, file := range files {
		if len(file.data) == 0 {
			continue
		}
		if f.save == "" {
			if file.ext != "html" { // the text form stands in for HTML
				fmt.Fprintf(stderr, "[result %d: %s image, %d bytes; use --save DIR to keep it]\n", n, file.ext, len(file.data))
			}
			continue
		}
		if err := os.MkdirAll(f.save, 0o755); err != nil {
			return err
		}
		p := filepath.Join(f.save, fmt.Sprintf("result-%d.%s", n, file.ext))
		if err := os.WriteFile(p, file.data, 0o644); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "[result %d: saved %s]\n", n, p)
	}
	if r.Text != "" && (r.Main || len(r.PNG)+len(r.JPEG)+len(r.SVG) == 0) {
		fmt.Fprintln(stdout, r.Text)
	}
	return nil
}

func newRunCmd(g *globals) *cobra.Command {
	var (
		lang string
		cwd  string
	)
	cmd := &cobra.Command{
		Use:   "run NAME [FILE | -] [flags]",
		Short: "Run code once in a fresh interpreter",
		Long: `Run code once in a fresh interpreter in a started sandbox: nothing from
earlier runs is visible. Use sbx ctx for an interpreter that keeps its state.

Languages: python, javascript and bash (with rich results: the value of the last
expression, matplotlib figures, HTML tables), and sh, ruby and perl (output
only). The sandbox's image must have the interpreter: see
scripts/build-python-image.sh for one with python3, numpy, pandas, matplotlib
and node.

Output is shown as it comes; the last expression's value is printed after it.
sbx exits with 1 when the code raised an error and 124 when it timed out.`,
		Example: `  sbx run box --lang python -c 'import sys; sys.version'
  sbx run box --lang python ./plot.py --save ./out
  echo 'console.log(6 * 7)' | sbx run box --lang javascript -`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) < 1 || len(args) > 2 {
				return usagef("%s takes a sandbox NAME and optionally a FILE (got %d arguments)", cmd.CommandPath(), len(args))
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&lang, "lang", "python", "language: python, javascript, bash, sh, ruby or perl")
	cmd.Flags().StringVar(&cwd, "cwd", "", "directory to run in (default: the sandbox's workdir)")
	f := addRunFlags(cmd)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if err := f.check(); err != nil {
			return err
		}
		file := ""
		if len(args) == 2 {
			file = args[1]
		}
		code, err := f.source(file, cmd.InOrStdin())
		if err != nil {
			return err
		}
		env, err := parseKV("--env", f.envs)
		if err != nil {
			return err
		}
		c, err := g.client()
		if err != nil {
			return err
		}
		req := sdk.RunRequest{Language: lang, Code: code, Cwd: cwd, TimeoutSeconds: f.timeout, Env: env}
		return f.do(cmd, func(ctx context.Context, h *sdk.RunHandlers) (*sdk.RunResult, error) {
			return c.Run(ctx, args[0], req, h)
		})
	}
	return cmd
}
