// Package network gives sandboxes their network: a network namespace per
// instance joined to an sbx bridge by a veth pair, an address from the
// daemon's subnet, NAT for egress, a DNS server on the gateway, a live egress
// policy enforced with nftables, and the preview proxy for exposed ports.
//
// Words:
//
//	bridge    the Linux bridge (default "sbx0") that holds the gateway address.
//	          Its name also names the daemon's nftables table (inet <bridge>).
//	lease     an address of the subnet held by one running instance; kept in
//	          the store so two instances never share one across restarts.
//	policy    what a sandbox may connect to: allow-all, block-all, allow-list
//	          or deny-list of CIDRs and domain names.
//	learned   addresses the DNS server handed out for a name a domain rule
//	          matched; they sit in a per-sandbox nftables set with a timeout,
//	          so a rule follows the name when its addresses change.
//
// Everything the package makes for a sandbox is named after the sandbox id
// (see names.go), so Teardown can remove it from the id alone, even after a
// crash, and Prune can find what no sandbox owns.
//
// Kernel state (bridge, veths, namespaces, rules) outlives the daemon, so
// running sandboxes keep their network while it restarts (docs/architecture.md, invariant 5).
package network
