package main

import (
	"testing"

	"github.com/sbxhq/sbx/sdk"
)

func TestParseVolumeFlags(t *testing.T) {
	got, err := parseVolumeFlags([]string{"data:/data", "ref:/ref:ro", "x:/x:rw"})
	want := []sdk.VolumeMount{{Name: "data", Path: "/data"}, {Name: "ref", Path: "/ref", ReadOnly: true}, {Name: "x", Path: "/x"}}
	if err != nil || len(got) != 3 || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Errorf("parseVolumeFlags = %+v, %v", got, err)
	}
	for _, bad := range []string{"data", ":/x", "data:", "data:/x:rx", "a:/b:ro:x"} {
		if _, err := parseVolumeFlags([]string{bad}); err == nil {
			t.Errorf("parseVolumeFlags(%q) accepted", bad)
		}
	}
}

func TestBucketFlags(t *testing.T) {
	t.Setenv("AWS_ACCESS_KEY_ID", "ak")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "sk")
	f := &bucketFlags{mounts: []string{"b/team/x:/mnt/b:ro"}, endpoint: "http://127.0.0.1:7070", pathStyle: true}
	var req sdk.CreateSandboxRequest
	if err := f.applyCreate(&req); err != nil {
		t.Fatal(err)
	}
	want := sdk.BucketMount{Bucket: "b", Prefix: "team/x", Path: "/mnt/b", ReadOnly: true, Endpoint: "http://127.0.0.1:7070", PathStyle: true, AccessKeyID: "ak", SecretAccessKey: "sk"}
	if len(req.Buckets) != 1 || req.Buckets[0] != want {
		t.Errorf("buckets = %+v", req.Buckets)
	}
	if err := (&bucketFlags{mounts: []string{"b:/x"}}).applyCreate(&req); err == nil {
		t.Error("a --bucket without an endpoint was accepted")
	}
	t.Setenv("AWS_SECRET_ACCESS_KEY", "")
	if err := (&bucketFlags{mounts: []string{"b:/x"}, endpoint: "http://h"}).applyCreate(&req); err == nil {
		t.Error("a --bucket without keys was accepted")
	}
}
