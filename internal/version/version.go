// Package version holds the version of sbx, one semver for the binaries, the
// API document (internal/api APIVersion, sdks/openapi.json info.version), the
// Python SDK (sdks/python/pyproject.toml, sbx.__version__) and the TypeScript
// SDK (sdks/typescript/package.json); version_test.go keeps them equal.
//
// A release is a commit where Version names the release and CHANGELOG.md has
// its section; scripts/release.sh refuses any other version, so a release
// build needs no -ldflags and two builds of one commit are the same bytes.
package version

// Version is the semver (without a leading "v") of this tree.
const Version = "0.1.0"
