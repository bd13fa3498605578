package store_test

import (
	"context"
	"errors"
	"github.com/sbxhq/sbx/internal/errdefs"
	"reflect"
	"testing"

	"github.com/sbxhq/sbx/internal/auth"
	"github.com/sbxhq/sbx/internal/store"
)

// notTeamScoped are the store's methods that take no team from the
// caller's context, and why. Every other method must refuse a context with
// neither a principal nor a system scope, so a method added later is
// covered without anyone remembering to list it.
var notTeamScoped = map[string]string{
	"Close": "no records",
	// API keys and teams are the operator's: the API gates them by scope.
	"CreateKey": "operator's table", "ListKeys": "operator's table", "RevokeKey": "operator's table", "SetKeysUsed": "operator's table",
	"CreateTeam": "operator's table", "GetTeam": "operator's table", "ListTeams": "operator's table", "SetQuotas": "operator's table",
	"DeleteTeam": "operator's table", "SetTeamWebhook": "operator's table", "DeleteTeamWebhook": "operator's table",
	"ListTeamWebhooks": "operator's table",
	// These take the team as an argument.
	"Usage": "team argument", "CheckStart": "team argument", "CheckDisk": "team argument", "ListAudit": "team argument",
	"SetDiskOutside": "wiring at start, no query",
	"AppendAudit":    "entries carry their team", "PruneAudit": "operator's retention",
	// Keyed by a sandbox id a scoped lookup produced, or by a secret token.
	"CreateLease": "sandbox id", "GetLease": "sandbox id", "ListLeases": "the network's own allocation table",
	"DeleteLease": "sandbox id", "CreatePort": "sandbox id", "GetPort": "sandbox id", "ListPorts": "sandbox id",
	"DeletePort": "sandbox id", "CreateSSHAccess": "sandbox id", "SSHAccessByTokenHash": "token hash",
	"ListSSHAccess": "sandbox id", "DeleteSSHAccess": "sandbox id", "DeleteExpiredSSHAccess": "expiry sweep",
}

// TestStoreFailsClosed calls every method of the SQLite store with a
// context that carries neither a principal nor a system scope: each must
// refuse with ErrNoScope rather than answer for every team.
func TestStoreFailsClosed(t *testing.T) {
	s, _ := openTemp(t)
	ctx := context.Background()
	v := reflect.ValueOf(s)
	ctxType := reflect.TypeFor[context.Context]()
	checked := 0
	for i := 0; i < v.NumMethod(); i++ {
		m := v.Type().Method(i)
		if _, ok := notTeamScoped[m.Name]; ok {
			continue
		}
		ft := m.Type // receiver first
		if ft.NumIn() < 2 || ft.In(1) != ctxType {
			t.Errorf("%s takes no context first: list it in notTeamScoped or give it one", m.Name)
			continue
		}
		args := []reflect.Value{reflect.ValueOf(ctx)}
		for j := 2; j < ft.NumIn(); j++ {
			args = append(args, zeroArg(ft.In(j)))
		}
		out := v.Method(i).Call(args)
		err, _ := out[len(out)-1].Interface().(error)
		if !errors.Is(err, store.ErrNoScope) {
			t.Errorf("%s without a principal: err = %v, want ErrNoScope", m.Name, err)
		}
		checked++
	}
	if checked < 20 {
		t.Fatalf("checked only %d methods", checked)
	}

	// The same calls under a principal or the system scope pass the check.
	for _, ok := range []context.Context{
		auth.System(ctx, "test"),
		auth.WithPrincipal(ctx, auth.Principal{KeyID: "k", Team: "a"}),
	} {
		if _, err := s.ListSandboxes(ok, store.Filter{}); err != nil {
			t.Fatal(err)
		}
	}
}

// zeroArg is a usable zero value of t: pointers point at a zero value.
func zeroArg(t reflect.Type) reflect.Value {
	if t.Kind() == reflect.Pointer {
		return reflect.New(t.Elem())
	}
	return reflect.Zero(t)
}

// TestTeamKeyCannotNameAnotherTeam: a record made, or a pool read, under a
// team's key that names another team is refused; the system scope may.
func TestTeamKeyCannotNameAnotherTeam(t *testing.T) {
	s, _ := openTemp(t)
	if err := s.CreateTeam(context.Background(), &store.Team{ID: "b"}); err != nil {
		t.Fatal(err)
	}
	a := auth.WithPrincipal(context.Background(), auth.Principal{KeyID: "ka", Team: "a"})
	if err := s.CreateSandbox(a, &store.Sandbox{ID: "sbx-x", State: "created", Team: "b"}); err == nil {
		t.Fatal("team a's key made a sandbox of team b")
	}
	if _, err := s.GetPool(a, "b", "p"); errdefs.KindOf(err) != errdefs.KindInternal {
		t.Fatalf("team a's key read team b's pool: %v", err)
	}
	if err := s.CreateSandbox(auth.System(context.Background(), "test"), &store.Sandbox{ID: "sbx-y", State: "created", Team: "b"}); err != nil {
		t.Fatal(err)
	}
}
