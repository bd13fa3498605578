package network

import (
	"crypto/sha256"
	"encoding/hex"
)

// Kernel names are short (15 bytes for an interface), so every per-sandbox
// object carries a key made from the sandbox id: 12 hex digits of its
// SHA-256, unique enough for the sandboxes of one host.
func keyOf(id string) string {
	h := sha256.Sum256([]byte(id))
	return hex.EncodeToString(h[:6])
}

// vethName is the host end of a sandbox's veth pair; the other end is "eth0"
// inside the sandbox.
func vethName(id string) string { return vethPrefix + keyOf(id) }

const vethPrefix = "sbv"

// chainName is the sandbox's egress chain; netSetName and dnsSetName are its
// sets of policy CIDRs and of addresses learned through DNS.
func chainName(id string) string  { return "sb_" + keyOf(id) }
func netSetName(id string) string { return chainName(id) + "_net" }
func dnsSetName(id string) string { return chainName(id) + "_dns" }
