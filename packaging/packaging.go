// Package packaging holds the files sbx ships for installing it on a host,
// embedded so the binary can write them (sbx install-service).
package packaging

import _ "embed"

// SystemdUnit is packaging/sbx.service: the systemd unit of sbx serve with
// ExecStart=/usr/local/bin/sbx serve.
//
//go:embed sbx.service
var SystemdUnit string

// DefaultEnv is packaging/sbx.env, the /etc/sbx/sbx.env the .deb installs
// (packaging/cmd/mkdeb): every setting commented out, at its default.
//
//go:embed sbx.env
var DefaultEnv string
