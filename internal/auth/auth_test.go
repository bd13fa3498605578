package auth

import (
	"context"
	"testing"
)

// TestSeesFailsClosed: a context with neither a principal nor a system
// scope sees no team's objects; the named system scope sees all; a
// principal added on top of a system scope decides again.
func TestSeesFailsClosed(t *testing.T) {
	bg := context.Background()
	if Sees(bg, "a") || Sees(bg, "") {
		t.Fatal("a context without a principal sees objects")
	}
	sys := System(WithPrincipal(bg, Principal{KeyID: "k", Team: "a"}), "test")
	if !Sees(sys, "a") || !Sees(sys, "b") {
		t.Fatal("the system scope does not see every team")
	}
	if r, ok := SystemReason(sys); !ok || r != "test" {
		t.Fatalf("SystemReason = %q, %v", r, ok)
	}
	if _, ok := FromContext(sys); ok {
		t.Fatal("the system scope kept the principal it replaced")
	}
	team := WithPrincipal(sys, Principal{KeyID: "k", Team: "a"})
	if Sees(team, "b") || !Sees(team, "a") {
		t.Fatal("a principal over a system scope does not decide")
	}
	if _, ok := SystemReason(team); ok {
		t.Fatal("a principal's context reports a system scope")
	}
}
