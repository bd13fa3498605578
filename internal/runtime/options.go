package runtime

// Option configures a runtime (NewRunc, NewRunsc). An option that concerns
// one runtime only says so; the other ignores it.
type Option func(*options)

type options struct {
	args     []string
	binary   string
	shim     string
	platform string
}

func applyOptions(opts []Option) options {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	return o
}

// WithArgs replaces the command line of every instance's init process (the
// agent by default). It is for tests and debugging, e.g.
// WithArgs([]string{"/bin/busybox", "sleep", "1000"}); sbx itself never sets it.
func WithArgs(args []string) Option {
	return func(o *options) { o.args = append([]string(nil), args...) }
}

// WithBinary uses the runtime's binary (runc, runsc) at path instead of the
// one on PATH.
func WithBinary(path string) Option {
	return func(o *options) { o.binary = path }
}

// WithNetnsShim (runsc) runs the runsc commands that wire a sandbox's
// network through `sbx runsc-shim` (runscshim.Run) with the sbx binary at
// path.
func WithNetnsShim(path string) Option {
	return func(o *options) { o.shim = path }
}

// WithPlatform (runsc) picks gVisor's platform ("ptrace", "kvm", or
// "systrap" where the runsc build has it); the default is ptrace.
func WithPlatform(name string) Option {
	return func(o *options) { o.platform = name }
}
