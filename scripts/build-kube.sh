#!/usr/bin/env bash
# Builds the Kubernetes control plane the cluster tests run against, from the
# Go module proxy, and prints the directory that holds the binaries:
#   kube-apiserver, kube-scheduler, kube-controller-manager, kubectl
#   (k8s.io/kubernetes), agent-sandbox-controller (sigs.k8s.io/agent-sandbox)
# plus agent-sandbox's CRDs under crds/. etcd comes from Debian (etcd-server).
#
#   SBX_KUBE_BIN=$(./scripts/build-kube.sh)
#
# k8s.io/kubernetes cannot be `go install`ed: its go.mod replaces the staging
# modules with local paths. A scratch module that requires it and replaces
# each staging module with its published v0.x release builds it. The result
# is cached in $SBX_KUBE_CACHE (default /var/cache/sbx/kube) keyed by
# version: about 10 minutes and 3 GB of RAM once per machine, nothing after.
set -euo pipefail
version=${SBX_KUBE_VERSION:-v1.37.2}
sandbox_version=${SBX_AGENT_SANDBOX_VERSION:-v1.0.1}
cache=${SBX_KUBE_CACHE:-/var/cache/sbx/kube}
out="$cache/$version-as$sandbox_version"
if [ -f "$out/.done" ]; then
	echo "$out"
	exit 0
fi
mkdir -p "$cache"
tmp=$(mktemp -d "$cache/.build-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
staging_version="v0.${version#v1.}"
staging="api apiextensions-apiserver apimachinery apiserver cli-runtime client-go
cloud-provider cluster-bootstrap code-generator component-base component-helpers
controller-manager cri-api cri-client cri-streaming csi-translation-lib
dynamic-resource-allocation endpointslice externaljwt kms kube-aggregator
kube-controller-manager kube-proxy kube-scheduler kubectl kubelet metrics
mount-utils pod-security-admission sample-apiserver sample-cli-plugin
sample-controller streaming"
mkdir -p "$tmp/src" "$tmp/bin"
{
	echo "module sbxkubebuild"
	echo "go 1.26"
	echo "require k8s.io/kubernetes $version"
	for m in $staging; do echo "replace k8s.io/$m => k8s.io/$m $staging_version"; done
} >"$tmp/src/go.mod"
cat >"$tmp/src/tools.go" <<'GO'
//go:build tools

package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubectl"
)
GO
echo "build-kube: building Kubernetes $version (about 10 minutes, once)" >&2
(
	cd "$tmp/src"
	GOFLAGS=-mod=mod go mod tidy -e >&2 2>/dev/null || true
	for c in kube-apiserver kube-scheduler kube-controller-manager kubectl; do
		CGO_ENABLED=0 GOFLAGS="-mod=mod -trimpath" go build -o "$tmp/bin/$c" "k8s.io/kubernetes/cmd/$c" >&2
	done
)
echo "build-kube: building agent-sandbox-controller $sandbox_version" >&2
CGO_ENABLED=0 GOBIN="$tmp/bin" GOFLAGS=-trimpath go install "sigs.k8s.io/agent-sandbox/cmd/agent-sandbox-controller@$sandbox_version" >&2
mod=$(go mod download -json "sigs.k8s.io/agent-sandbox@$sandbox_version" | sed -n 's/.*"Dir": "\(.*\)".*/\1/p')
mkdir -p "$tmp/bin/crds"
cp "$mod"/k8s/crds/*.yaml "$tmp/bin/crds/"
chmod -R u+w "$tmp/bin"
rm -rf "$out"
mv "$tmp/bin" "$out"
touch "$out/.done"
echo "$out"
