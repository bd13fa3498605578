package main

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/sbxhq/sbx/sdk"
)

// sbx update --env K=V --unset-env K sends {"env": {"K": "V", "U": null}}.
func TestUpdateSendsEnvChange(t *testing.T) {
	mux := http.NewServeMux()
	var got map[string]json.RawMessage
	mux.HandleFunc("PATCH /v1/sandboxes/{id}", func(w http.ResponseWriter, r *http.Request) {
		json.NewDecoder(r.Body).Decode(&got)
		reply(w, http.StatusOK, sdk.Sandbox{ID: "sbx-9", Name: "box", State: sdk.StateStarted})
	})
	fakeDaemon(t, mux)
	r := runCLI(t, "", "update", "box", "--env", "A=1=2", "--unset-env", "B")
	if r.code != 0 {
		t.Fatalf("got %+v", r)
	}
	if env := string(got["env"]); env != `{"A":"1=2","B":null}` {
		t.Errorf("env sent: %s (request %v)", env, got)
	}
	if r := runCLI(t, "", "update", "box", "--env", "A=1", "--unset-env", "A"); r.code == 0 || !strings.Contains(r.stderr, "--unset-env") {
		t.Errorf("set and unset of one name: %+v", r)
	}
}
