package doctor

import "context"

// programCheck checks that program is on PATH and answers versionArgs;
// missing, it is a fail when sbx serve cannot run without it, else a warn
// that says what does not work (purpose).
func programCheck(ctx context.Context, h Host, program string, required bool, purpose string, versionArgs ...string) Result {
	path, err := h.LookPath(program)
	if err != nil {
		detail := program + " is not on PATH (" + purpose + ")"
		if required {
			return fail(program, detail, installFix(program))
		}
		return warn(program, detail, installFix(program))
	}
	if len(versionArgs) == 0 {
		return ok(program, path)
	}
	out, err := h.Output(ctx, path, versionArgs...)
	if err != nil {
		detail := path + " does not run: " + err.Error() + ": " + firstLine(out)
		if required {
			return fail(program, detail, "reinstall it: "+installFix(program))
		}
		return warn(program, detail, "reinstall it: "+installFix(program))
	}
	return ok(program, path+": "+firstLine(out))
}

func checkRunc(ctx context.Context, h Host, _ Config) Result {
	return programCheck(ctx, h, "runc", true, "it runs every sandbox of class container", "--version")
}

// checkRunsc says which runsc sbx serve runs: sbx's own (scripts/setup.sh)
// if installed, else Debian's on PATH, which it falls back to with a
// warning (runtime.FindRunsc).
func checkRunsc(ctx context.Context, h Host, _ Config) Result {
	if h.Runsc != "" {
		r := programCheck(ctx, h, h.Runsc, false, "SBX_RUNSC names it: sandboxes of class gvisor cannot be created", "--version")
		r.Check = "runsc"
		return r
	}
	if h.BundledRunsc == "" {
		return programCheck(ctx, h, "runsc", false, "without it sandboxes of class gvisor cannot be created", "--version")
	}
	if path, err := h.LookPath(h.BundledRunsc); err == nil {
		out, err := h.Output(ctx, path, "--version")
		if err != nil {
			return warn("runsc", path+" does not run: "+err.Error()+": "+firstLine(out), "rebuild and reinstall it: sudo scripts/setup.sh")
		}
		return ok("runsc", path+": "+firstLine(out))
	}
	r := programCheck(ctx, h, "runsc", false, "without it sandboxes of class gvisor cannot be created; sbx's own runsc is not installed at "+h.BundledRunsc+" either", "--version")
	if r.Status == OK {
		return warn("runsc", r.Detail+": sbx falls back to this runsc, as "+h.BundledRunsc+" is missing (Debian 12's is a 2022 gVisor on the slow ptrace platform)",
			"install sbx's runsc: sudo scripts/setup.sh")
	}
	return r
}

func checkNft(ctx context.Context, h Host, _ Config) Result {
	return programCheck(ctx, h, "nft", true, "sbx serve sets up the sandboxes' NAT and egress rules with it", "--version")
}

func checkIP(ctx context.Context, h Host, _ Config) Result {
	return programCheck(ctx, h, "ip", false, "the daemon uses netlink directly; the tests and troubleshooting use ip", "-V")
}

func checkMkfs(ctx context.Context, h Host, _ Config) Result {
	return programCheck(ctx, h, "mkfs.ext4", false, "without it sandboxes with a disk limit (diskMiB) cannot be created")
}

func checkBusybox(_ context.Context, h Host, _ Config) Result {
	if err := h.CheckBusybox(h.Busybox); err != nil {
		return fail("busybox", "the base image cannot be made: "+err.Error(), installFix("busybox"))
	}
	return ok("busybox", h.Busybox+" is static (the base image)")
}
