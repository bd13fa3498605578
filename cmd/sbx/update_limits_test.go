package main

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/sbxhq/sbx/sdk"
)

// sbx update --cpu --memory --pids --label sends the new limits and the
// labels that replace the old ones; flags left out are not sent.
func TestUpdateSendsLimitsAndLabels(t *testing.T) {
	mux := http.NewServeMux()
	var got map[string]json.RawMessage
	mux.HandleFunc("PATCH /v1/sandboxes/{id}", func(w http.ResponseWriter, r *http.Request) {
		got = nil
		json.NewDecoder(r.Body).Decode(&got)
		reply(w, http.StatusOK, sdk.Sandbox{ID: "sbx-9", Name: "box", State: sdk.StateStarted})
	})
	fakeDaemon(t, mux)
	r := runCLI(t, "", "update", "box", "--cpu", "2", "--memory", "1024", "--pids", "512", "--label", "k=v")
	if r.code != 0 {
		t.Fatalf("got %+v", r)
	}
	for field, want := range map[string]string{"cpu": "2", "memoryMiB": "1024", "pidsLimit": "512", "labels": `{"k":"v"}`} {
		if string(got[field]) != want {
			t.Errorf("%s sent: %s, want %s (request %v)", field, got[field], want, got)
		}
	}
	if r := runCLI(t, "", "update", "box", "--keep-alive"); r.code != 0 {
		t.Fatalf("got %+v", r)
	}
	for _, field := range []string{"cpu", "memoryMiB", "pidsLimit"} {
		if _, ok := got[field]; ok {
			t.Errorf("%s sent without its flag: %v", field, got)
		}
	}
	if l, ok := got["labels"]; ok && string(l) != "null" {
		t.Errorf("labels sent without --label: %s", l)
	}
}
