package integration

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	kubenode "github.com/sbxhq/sbx/internal/kube/node"
	"github.com/sbxhq/sbx/internal/version"
)

// TestKubeDeploy: the kustomization of deploy/kubernetes, and the example
// overlay of its values, are accepted by the API server (server-side dry
// run); the DaemonSet's and the gateway's arguments, expanded as the
// kubelet expands them, parse with sbx serve's and sbx gateway's real
// flags; the DaemonSet sets every setting the cluster tests give the hosts
// they run as processes (startKubeHost), as a flag or its environment
// variable, mutual TLS with the gateway included; the gateway reaches the
// hosts with its client certificate as TestKubeMTLS's does and reads the
// teams' keys file as TestKubeTeams's does; keys come from Secrets, never from the manifests; the kubelet
// port is 10260; both images are this version's.
func TestKubeDeploy(t *testing.T) {
	c := startCluster(t)
	// A server-side dry run persists nothing, not even a Namespace, so
	// the controller's namespace is made first (startCluster made sbx's).
	c.kubectl("create", "namespace", "agent-sandbox-system")
	for _, dir := range []string{kubeDeploy, kubeDeploy + "-example"} {
		rendered := c.kubectl("kustomize", dir)
		c.kubectlIn(rendered, "apply", "--dry-run=server", "-f", "-")
		objs := parseManifests(t, rendered)

		host := objs.daemonSet(t, "sbx-host")
		sbx := containerNamed(t, host.Spec.Template.Spec.Containers, "sbx")
		env := objs.containerEnv(t, sbx)
		args := expandArgs(append(sbx.Command[1:], sbx.Args...), env)
		if sbx.Command[0] != "/usr/local/bin/sbx" || sbx.Command[1] != "serve" {
			t.Errorf("%s: the host runs %q, want /usr/local/bin/sbx serve (scripts/build-oci.sh's image)", dir, sbx.Command)
		}
		parseFlags(t, dir+": the DaemonSet's", args)
		setting := flagValues(args)
		if dir == kubeDeploy && setting["kube-node-port"] != strconv.Itoa(kubenode.DefaultPort) {
			t.Errorf("--kube-node-port = %q, want %d", setting["kube-node-port"], kubenode.DefaultPort)
		}
		wantImage := "ghcr.io/sbxhq/sbx-host:" + version.Version
		for _, ctr := range append(host.Spec.Template.Spec.InitContainers, host.Spec.Template.Spec.Containers...) {
			if ctr.Image != wantImage {
				t.Errorf("%s: container %s runs %s, want %s", dir, ctr.Name, ctr.Image, wantImage)
			}
		}

		// What the cluster tests give a host, the DaemonSet gives too:
		// as the flag, or through the variable sbx serve reads instead.
		envOf := serveFlagEnv(t)
		replaced := map[string]string{
			"kubeconfig":               "the pod's service account (sbx serve's default)",
			"blob-s3-credentials-file": "SBX_BLOB_S3_ACCESS_KEY and SBX_BLOB_S3_SECRET_KEY from Secret sbx-blob",
		}
		tested := append(flagLiterals(t, "kube_node_test.go", "startKubeHost"), flagLiterals(t, "kube_mtls_test.go", "startMTLSHost")...)
		for _, name := range append(tested, flagLiterals(t, "../internal/blob/s3/s3test/versitygw.go", "Flags")...) {
			if _, ok := setting[name]; ok {
				continue
			}
			if v := envOf[name]; v != "" {
				if _, ok := env[v]; ok {
					continue
				}
			}
			if why, ok := replaced[name]; ok {
				if name == "blob-s3-credentials-file" && (env["SBX_BLOB_S3_ACCESS_KEY"] == "" || env["SBX_BLOB_S3_SECRET_KEY"] == "") {
					t.Errorf("%s: the DaemonSet has neither --%s nor %s", dir, name, why)
				}
				continue
			}
			also := ""
			if envOf[name] != "" {
				also = " nor its variable " + envOf[name]
			}
			t.Errorf("%s: the cluster tests' hosts get --%s; the DaemonSet gives neither it%s", dir, name, also)
		}

		secretsReferenced(t, dir+": the DaemonSet", &host.Spec.Template.Spec, sbx, args)
		for k, v := range env { // ConfigMap values included
			if secretName.MatchString(k) && !strings.HasPrefix(v, "secret:") {
				t.Errorf("%s: the DaemonSet's %s is not from a Secret", dir, k)
			}
		}

		gwPod := &objs.deployment(t, "sbx-gateway").Spec.Template.Spec
		gw := containerNamed(t, gwPod.Containers, "gateway")
		secretsReferenced(t, dir+": the gateway", gwPod, gw, gw.Command)
		if gw.Image != "ghcr.io/sbxhq/sbx-gateway:"+version.Version || gw.Command[0] != "/usr/local/bin/sbx" || gw.Command[1] != "gateway" {
			t.Errorf("%s: the gateway runs %s %q", dir, gw.Image, gw.Command)
		}
		gwArgs := expandArgs(append(gw.Command[1:], gw.Args...), objs.containerEnv(t, gw))
		parseFlags(t, dir+": the gateway's", gwArgs)
		for _, name := range append(flagLiterals(t, "kube_mtls_test.go", "mtlsGatewayFlags"), "keys-file") {
			if !slices.Contains(gwArgs, "--"+name) {
				t.Errorf("%s: the cluster tests' gateway gets --%s (TestKubeMTLS, TestKubeTeams); the Deployment does not", dir, name)
			}
		}
	}
}

var secretName = regexp.MustCompile(`(?i)(key|secret|token|password)`)

// secretsReferenced: no key in plain text. An environment variable named
// like one comes from a Secret, and a flag named like one names a file of
// a Secret volume.
func secretsReferenced(t *testing.T, what string, pod *corev1.PodSpec, c *corev1.Container, args []string) {
	t.Helper()
	for _, e := range c.Env {
		if secretName.MatchString(e.Name) && (e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil) {
			t.Errorf("%s: env %s is not from a Secret", what, e.Name)
		}
	}
	secretDirs := map[string]bool{}
	for _, v := range pod.Volumes {
		if v.Secret != nil {
			secretDirs[v.Name] = true
		}
	}
	for i, a := range args {
		name, value, ok := strings.Cut(strings.TrimPrefix(a, "--"), "=")
		if !strings.HasPrefix(a, "--") || !secretName.MatchString(name) {
			continue
		}
		if !ok && i+1 < len(args) {
			value = args[i+1]
		}
		fromSecret := false
		for _, m := range c.VolumeMounts {
			fromSecret = fromSecret || (secretDirs[m.Name] && strings.HasPrefix(value, m.MountPath+"/"))
		}
		if !fromSecret {
			t.Errorf("%s: --%s %q is not a file of a Secret volume", what, name, value)
		}
	}
}

// manifests are the objects of a rendered kustomization by kind and name.
type manifests map[string][]byte

func parseManifests(t *testing.T, rendered string) manifests {
	t.Helper()
	m := manifests{}
	for _, doc := range strings.Split(rendered, "\n---\n") {
		var meta struct {
			Kind     string
			Metadata struct{ Name string }
		}
		if err := yaml.Unmarshal([]byte(doc), &meta); err != nil {
			t.Fatalf("rendered manifest: %v\n%s", err, doc)
		}
		m[meta.Kind+"/"+meta.Metadata.Name] = []byte(doc)
	}
	return m
}

func (m manifests) get(t *testing.T, key string, into any) {
	t.Helper()
	doc, ok := m[key]
	if !ok {
		t.Fatalf("the kustomization has no %s", key)
	}
	if err := yaml.Unmarshal(doc, into); err != nil {
		t.Fatalf("%s: %v", key, err)
	}
}

func (m manifests) daemonSet(t *testing.T, name string) *appsv1.DaemonSet {
	var ds appsv1.DaemonSet
	m.get(t, "DaemonSet/"+name, &ds)
	return &ds
}

func (m manifests) deployment(t *testing.T, name string) *appsv1.Deployment {
	var d appsv1.Deployment
	m.get(t, "Deployment/"+name, &d)
	return &d
}

// containerEnv is a container's environment as the kubelet makes it: its
// ConfigMaps' data (envFrom), then env, with a field or Secret reference
// standing in for what the kubelet would read.
func (m manifests) containerEnv(t *testing.T, c *corev1.Container) map[string]string {
	t.Helper()
	env := map[string]string{}
	for _, from := range c.EnvFrom {
		if from.ConfigMapRef == nil {
			t.Fatalf("container %s: envFrom %+v is not a ConfigMap", c.Name, from)
		}
		var cm corev1.ConfigMap
		m.get(t, "ConfigMap/"+from.ConfigMapRef.Name, &cm)
		for k, v := range cm.Data {
			env[k] = v
		}
	}
	for _, e := range c.Env {
		switch {
		case e.ValueFrom == nil:
			env[e.Name] = e.Value
		case e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "status.hostIP":
			env[e.Name] = "192.0.2.10"
		case e.ValueFrom.FieldRef != nil:
			env[e.Name] = "machine-1"
		case e.ValueFrom.SecretKeyRef != nil:
			env[e.Name] = "secret:" + e.ValueFrom.SecretKeyRef.Name + "/" + e.ValueFrom.SecretKeyRef.Key
		default:
			t.Fatalf("container %s: env %s: %+v", c.Name, e.Name, e.ValueFrom)
		}
	}
	return env
}

func containerNamed(t *testing.T, cs []corev1.Container, name string) *corev1.Container {
	t.Helper()
	for i := range cs {
		if cs[i].Name == name {
			return &cs[i]
		}
	}
	t.Fatalf("no container %s", name)
	return nil
}

var varRef = regexp.MustCompile(`\$\(([A-Za-z_][A-Za-z0-9_]*)\)`)

// expandArgs expands $(VAR) as the kubelet does: a defined variable's
// value; an undefined reference stays as written.
func expandArgs(args []string, env map[string]string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = varRef.ReplaceAllStringFunc(a, func(ref string) string {
			if v, ok := env[ref[2:len(ref)-1]]; ok {
				return v
			}
			return ref
		})
	}
	return out
}

// parseFlags runs the subcommand and its arguments with --help: cobra
// parses every flag before it looks at --help, so an unknown flag or a
// value of the wrong type fails.
func parseFlags(t *testing.T, what string, cmdArgs []string) {
	t.Helper()
	out, err := exec.Command(sbxBin, append(cmdArgs, "--help")...).CombinedOutput()
	if err != nil {
		t.Errorf("%s arguments %q do not parse: %v\n%s", what, cmdArgs, err, lastLines(string(out), 3))
	}
}

// flagValues maps each --name[=value] of args to its value.
func flagValues(args []string) map[string]string {
	m := map[string]string{}
	for _, a := range args {
		if name, ok := strings.CutPrefix(a, "--"); ok {
			name, value, _ := strings.Cut(name, "=")
			m[name] = value
		}
	}
	return m
}

// serveFlagEnv maps sbx serve's flags to the variables they read, from
// its help ("… (env SBX_BLOB_URL)").
func serveFlagEnv(t *testing.T) map[string]string {
	t.Helper()
	out, err := exec.Command(sbxBin, "serve", "--help").Output()
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`^\s+(?:-\w, )?--([a-z0-9-]+)\b.*\benv (SBX_[A-Z0-9_]+)`)
	m := map[string]string{}
	for _, line := range strings.Split(string(out), "\n") {
		if g := re.FindStringSubmatch(line); g != nil {
			m[g[1]] = g[2]
		}
	}
	if m["blob-url"] != "SBX_BLOB_URL" {
		t.Fatalf("sbx serve --help does not name --blob-url's variable:\n%s", out)
	}
	return m
}

// flagLiterals are the flag names ("--x" string constants) in function fn
// of a Go file: what a test helper passes to sbx serve.
func flagLiterals(t *testing.T, file, fn string) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), file, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Name.Name != fn {
			continue
		}
		ast.Inspect(fd, func(n ast.Node) bool {
			if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
				if s, err := strconv.Unquote(lit.Value); err == nil && strings.HasPrefix(s, "--") {
					names = append(names, strings.TrimPrefix(s, "--"))
				}
			}
			return true
		})
	}
	if len(names) == 0 {
		t.Fatalf("%s: no flags in %s", file, fn)
	}
	return names
}
