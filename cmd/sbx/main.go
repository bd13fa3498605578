// Command sbx is the sbx daemon, the in-instance agent and the command-line
// client, in one binary.
package main

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/sbxhq/sbx/sdk"
	"github.com/spf13/cobra"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run executes the command line and returns the process exit code.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		// After the first signal, restore the default handling so a second
		// Ctrl-C kills a command that is slow to wind down.
		<-ctx.Done()
		stop()
	}()

	root := newRootCmd()
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	cmd, err := root.ExecuteContextC(ctx)
	return exitCode(cmd, err, stderr)
}

// exitError ends the process with a code and no further message: the command's
// own exit code for exec, or 1 after errors that were already printed.
type exitError struct{ code int }

func (e *exitError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

// usageError is a mistake in the command line; it is printed with a pointer to
// the command's help.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// exitCode prints err (if any) in the CLI's one format and picks the exit code.
func exitCode(cmd *cobra.Command, err error, stderr io.Writer) int {
	if err == nil {
		return 0
	}
	var exit *exitError
	if errors.As(err, &exit) {
		return exit.code
	}
	if errors.Is(err, context.Canceled) {
		fmt.Fprintln(stderr, "sbx: interrupted")
		return 130
	}
	fmt.Fprintf(stderr, "sbx: %s\n", err)
	if hint := hintFor(err); hint != "" {
		fmt.Fprintln(stderr, hint)
	}
	var usage *usageError
	if errors.As(err, &usage) || strings.HasPrefix(err.Error(), "unknown command") {
		path := "sbx"
		if cmd != nil {
			path = cmd.CommandPath()
		}
		fmt.Fprintf(stderr, "Run '%s --help' for usage.\n", path)
	}
	var failed *sbxFailed
	if errors.As(err, &failed) {
		return failed.code() // exec.go
	}
	return 1
}

// hintFor says what to do about errors the user can fix outside sbx.
func hintFor(err error) string {
	var opErr *net.OpError
	var unknownCA x509.UnknownAuthorityError
	switch {
	case errors.As(err, &unknownCA):
		return "Pass the CA that signed the daemon's certificate with --ca-cert or SBX_CA_CERT."
	case errors.Is(err, sdk.ErrNoToken):
		return "Or pass the token with --token."
	case sdk.IsUnauthorized(err):
		return "Check the API token: set SBX_TOKEN or pass --token."
	case errors.As(err, &opErr):
		return "Is `sbx serve` running? Point the CLI at another daemon with --host or SBX_HOST."
	}
	return ""
}
