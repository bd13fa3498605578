package doctor

// A Program is an external program sbx, its tests, scripts or benchmark
// run, and where a Debian 12 host gets it.
type Program struct {
	Package string // the Debian package that has it; "" when none does
	Note    string // why it has no package or needs none; shown by the test
}

// Programs maps every program the Go code executes (by name, as in
// exec.Command("nft", …) or exec.LookPath("runsc")) to its package.
// TestSetupInstallsEveryProgram fails when the code runs a program missing
// here, or when scripts/setup.sh does not install its package; sbx doctor
// names the package in its fixes.
var Programs = map[string]Program{
	"runc":       {Package: "runc"},
	"runsc":      {Package: "runsc"},
	"nft":        {Package: "nftables"},
	"ip":         {Package: "iproute2"},
	"busybox":    {Package: "busybox-static"}, // static: the base image has no libc
	"mkfs.ext4":  {Package: "e2fsprogs"},
	"e2fsck":     {Package: "e2fsprogs"}, // internal/loopdisk's tests check the disk templates' copies
	"dumpe2fs":   {Package: "e2fsprogs"},
	"tmux":       {Package: "tmux"},
	"mmdebstrap": {Package: "mmdebstrap"},
	"dockerd":    {Package: "docker.io"},  // the benchmark, and integration/oci_image_test.go
	"docker":     {Package: "docker.io"},  // integration/oci_image_test.go: docker load
	"ctr":        {Package: "containerd"}, // integration/oci_image_test.go: ctr import
	"podman":     {Package: "podman"},     // bench only: scripts/bench-setup.sh
	"uname":      {Package: "coreutils"},
	"sleep":      {Package: "coreutils"},
	"true":       {Package: "coreutils"},
	"sh":         {Package: "dash"},
	"mount":      {Package: "mount"},
	"unshare":    {Package: "util-linux"}, // a sandbox's user and network namespaces (internal/userns)
	"s3fs":       {Package: "s3fs"},       // bucket mounts (internal/bucketmount)
	"go":         {Note: "the Go toolchain: setup.sh checks for it and says where to get it (Debian 12's golang is too old)"},
	"sbx":        {Note: "sbx itself: the examples run the CLI the repository builds (the integration tests put it on PATH)"},

	// Tests only: systemd-analyze checks the unit sbx install-service writes.
	"systemd-analyze": {Package: "systemd"},
	// Tests of the SDKs and compatibility layers (scripts/npm-install.sh).
	"node": {Package: "nodejs"},
	"npm":  {Note: "Debian's npm package, or bundled with a NodeSource nodejs (which conflicts with Debian's npm): setup.sh installs npm only when the command is missing"},

	// integration/upgrade_test.go builds the previous release (git archive);
	// integration/git_test.go: git http-backend serves a repository over smart HTTP.
	"git": {Package: "git"},
	// The Python SDK's suite (integration/sdk_py_test.go): python3 with
	// python3-httpx, python3-websockets and python3-pytest (setup.sh).
	"python3": {Package: "python3"},
	// sbx ssh, and the SSH gateway's tests.
	"ssh":  {Package: "openssh-client"},
	"scp":  {Package: "openssh-client"},
	"sftp": {Package: "openssh-client"},
	// Headless browser tests (dashboard, desktop noVNC page).
	"chromium": {Package: "chromium"},
	// The cluster tests' control plane; kube-apiserver and friends are built
	// from the Go module proxy by scripts/build-kube.sh.
	"etcd": {Package: "etcd-server"},
	// The documentation site (integration/docs_site_test.go, scripts/test.sh);
	// its theme is the mkdocs-material package.
	"mkdocs": {Package: "mkdocs"},
	// packaging/release_test.go: scripts/release.sh's tarballs and the .deb it checks.
	"tar":      {Package: "tar"},
	"dpkg-deb": {Package: "dpkg"},
}

// basePackages are in every Debian installation (priority required, what
// mmdebstrap's minbase variant installs), so setup.sh need not install them.
var basePackages = map[string]bool{
	"bash": true, "coreutils": true, "dash": true, "mount": true, "util-linux": true,
	"tar": true, "dpkg": true,
}

// installFix is the fix for a missing program: the package to install.
func installFix(program string) string {
	p, ok := Programs[program]
	if !ok || p.Package == "" {
		return "install " + program + " and put it on PATH"
	}
	return "apt-get install " + p.Package + " (or run scripts/setup.sh --deps)"
}
