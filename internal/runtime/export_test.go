package runtime

// What the external tests (package runtime_test, which can use
// runtimetest) need of this package's insides.
var (
	CgroupV2    = cgroupV2
	LeaveUserns = leaveUserns
)

const (
	SbxRunDir        = sbxRunDir
	ImageVersionFile = imageVersionFile
)

// RuncRoot is r's state root, RuncBinary its runc, RuncArgs the init it
// gives instances.
func RuncRoot(r *Runc) string   { return r.root }
func RuncBinary(r *Runc) string { return r.binary }
func RuncArgs(r *Runc) []string { return r.args }
