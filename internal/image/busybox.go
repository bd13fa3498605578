package image

// HostBusybox is the host's static busybox that EnsureBase makes the base
// image from (Debian: busybox-static).
const HostBusybox = "/bin/busybox"

// CheckBusybox says whether path can make the base image: it must exist and
// be statically linked. sbx doctor asks it before the daemon needs it.
func CheckBusybox(path string) error { return checkStatic(path) }
