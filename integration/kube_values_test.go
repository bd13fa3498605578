package integration

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/sbxhq/sbx/internal/kube/podspec"
	"github.com/sbxhq/sbx/sdk"
)

// TestKubeSandboxValues: a sandbox's env values and bucket keys, given to
// the gateway at create and by PATCH, are in a Secret its Sandbox owns and
// nowhere in the Sandbox object or its pod (read from the API server);
// the sandbox sees them (the env, and the bucket mounted with the keys);
// deleting the sandbox deletes the Secret. Only the sandbox namespace's
// Secrets are the host's to read.
func TestKubeSandboxValues(t *testing.T) {
	gc := startGatewayClusterWith(t, []string{"--egress-allow-private", "127.0.0.1"}, "sbx-values-a") // the bucket's versitygw is on loopback
	c, gw, srv := gc.cluster, gc.gw, gc.srv
	ctx := context.Background()
	raw := make([]byte, 16)
	rand.Read(raw)
	token := "tok-" + hex.EncodeToString(raw)
	bucket := srv.Bucket()
	if _, err := srv.Client().PutObject(ctx, bucket, "hello.txt", strings.NewReader("hello from s3\n"), -1, minio.PutObjectOptions{}); err != nil {
		t.Fatal(err)
	}
	sb, err := gw.client.CreateSandbox(ctx, sdk.CreateSandboxRequest{Name: "vals", CPU: 0.25, MemoryMiB: 128,
		Env: map[string]string{"API_TOKEN": token},
		Buckets: []sdk.BucketMount{{Bucket: bucket, Path: "/mnt/b", Endpoint: srv.Endpoint, PathStyle: true,
			AccessKeyID: srv.AccessKey, SecretAccessKey: srv.SecretKey}}})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	res, err := gw.client.Exec(ctx, "vals", sdk.ExecRequest{Shell: "echo $API_TOKEN; cat /mnt/b/hello.txt"})
	if err != nil || res.Stdout != token+"\nhello from s3\n" {
		t.Fatalf("the sandbox's env and bucket: %+v %v", res, err)
	}
	if got, err := gw.client.GetSandbox(ctx, "vals"); err != nil || got.Env["API_TOKEN"] != token {
		t.Fatalf("get: %+v %v (the env is shown, as on one host)", got, err)
	}
	secretName := podspec.ValuesSecretName(sb.ID)
	clean := func(when string, values ...string) {
		t.Helper()
		for _, kind := range []string{"sandbox", "pod"} {
			out := c.kubectl("get", kind, sb.ID, "-n", "sbx", "-o", "json")
			for _, v := range values {
				if strings.Contains(out, v) {
					t.Errorf("%s: the %s object carries the value %q:\n%s", when, kind, v, out)
				}
			}
			if !strings.Contains(out, `"`+podspec.AnnotationValues+`": "`+secretName+`"`) {
				t.Errorf("%s: the %s object does not name Secret %s:\n%s", when, kind, secretName, out)
			}
		}
		var sec struct {
			Metadata struct {
				OwnerReferences []struct{ Kind, Name, UID string } `json:"ownerReferences"`
			} `json:"metadata"`
			Data map[string]string `json:"data"`
		}
		if err := json.Unmarshal([]byte(c.kubectl("get", "secret", secretName, "-n", "sbx", "-o", "json")), &sec); err != nil {
			t.Fatal(err)
		}
		owners := sec.Metadata.OwnerReferences
		if len(owners) != 1 || owners[0].Kind != "Sandbox" || owners[0].Name != sb.ID || owners[0].UID != c.kubeField("sandbox", sb.ID, "{.metadata.uid}") {
			t.Errorf("%s: Secret %s's owners: %+v", when, secretName, owners)
		}
		data, _ := base64.StdEncoding.DecodeString(sec.Data[podspec.ValuesKey])
		for _, v := range values {
			if !strings.Contains(string(data), v) {
				t.Errorf("%s: Secret %s lacks %q", when, secretName, v)
			}
		}
	}
	clean("after create", token, srv.SecretKey)

	// A PATCHed env value goes into the Secret too; the sandbox sees it.
	second := "second-" + hex.EncodeToString(raw[:8])
	if _, err := gw.client.UpdateSandbox(ctx, "vals", sdk.UpdateSandboxRequest{Env: map[string]*string{"SECOND": &second}}); err != nil {
		t.Fatalf("patch: %v", err)
	}
	if res, err := gw.client.Exec(ctx, "vals", sdk.ExecRequest{Shell: "echo $SECOND"}); err != nil || res.Stdout != second+"\n" {
		t.Fatalf("the patched env: %+v %v", res, err)
	}
	clean("after a patch", token, srv.SecretKey, second)

	// Only the sandbox namespace's Secrets are the host's and the gateway's.
	for _, tc := range []struct{ who, verb, ns, want string }{
		{"sbx-host", "get", "sbx", "yes"}, {"sbx-host", "get", "sbx-system", "no"}, {"sbx-host", "get", "default", "no"},
		{"sbx-host", "create", "sbx", "no"},
		{"sbx-gateway", "create", "sbx", "yes"}, {"sbx-gateway", "get", "sbx-system", "no"},
	} {
		out, _ := c.tryKubectl("auth", "can-i", tc.verb, "secrets", "-n", tc.ns, "--as", "system:serviceaccount:sbx-system:"+tc.who)
		if strings.TrimSpace(out) != tc.want {
			t.Errorf("may %s %s secrets in %s? %q, want %s", tc.who, tc.verb, tc.ns, strings.TrimSpace(out), tc.want)
		}
	}

	if err := gw.client.DeleteSandbox(ctx, "vals", true); err != nil {
		t.Fatalf("delete: %v", err)
	}
	waitFor(t, 60*time.Second, "Secret "+secretName+" to be deleted with its Sandbox", func() bool {
		out, err := c.tryKubectl("get", "secret", secretName, "-n", "sbx")
		return err != nil && strings.Contains(out, "NotFound")
	})
}
