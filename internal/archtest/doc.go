// Package archtest holds tests of the module's shape: which of its packages
// may import which (docs/architecture.md, "Packages"). It has no code.
package archtest
