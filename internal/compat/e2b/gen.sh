#!/usr/bin/env bash
# Regenerates the Go code of envd's Connect-RPC services from proto/ (only
# when a .proto changes; the generated code is committed, so CI never runs this).
# Needs protoc (Debian: protobuf-compiler) and, from the Go module proxy:
#   go install google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.12
#   go install connectrpc.com/connect/cmd/protoc-gen-connect-go@v1.19.1
set -euo pipefail
cd "$(dirname "$0")"
export PATH="$(go env GOPATH)/bin:$PATH"
rm -rf envdpb
protoc -I proto -I /usr/include \
	--go_out=. --go_opt=module=github.com/sbxhq/sbx/internal/compat/e2b \
	--connect-go_out=. --connect-go_opt=module=github.com/sbxhq/sbx/internal/compat/e2b \
	process/process.proto filesystem/filesystem.proto
