package daytona

import (
	"math"
	"net/http"
	"strings"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/wire"
)

// createRequest is Daytona's CreateSandbox body, the fields sbx reads; the
// ones it cannot honour are refused by name rather than ignored.
type createRequest struct {
	Name                string            `json:"name"`
	Snapshot            string            `json:"snapshot"`
	User                string            `json:"user"`
	Env                 map[string]string `json:"env"`
	Labels              map[string]string `json:"labels"`
	Public              bool              `json:"public"`
	NetworkBlockAll     bool              `json:"networkBlockAll"`
	NetworkAllowList    string            `json:"networkAllowList"`
	DomainAllowList     string            `json:"domainAllowList"`
	OutboundProxyURL    string            `json:"outboundProxyUrl"`
	CPU                 float64           `json:"cpu"`
	GPU                 float64           `json:"gpu"`
	GPUType             []string          `json:"gpuType"`
	Memory              float64           `json:"memory"` // GiB
	Disk                float64           `json:"disk"`   // GiB
	AutoStopInterval    *int              `json:"autoStopInterval"`
	AutoPauseInterval   *int              `json:"autoPauseInterval"`
	AutoArchiveInterval *int              `json:"autoArchiveInterval"`
	AutoDeleteInterval  *int              `json:"autoDeleteInterval"`
	TTLMinutes          int               `json:"ttlMinutes"`
	Volumes             []sandboxVolume   `json:"volumes"`
	BuildInfo           *buildInfo        `json:"buildInfo"`
	LinkedSandbox       string            `json:"linkedSandbox"`
	Secrets             []any             `json:"secrets"`
	KVM                 bool              `json:"kvm"`
	Spot                bool              `json:"spot"`
	Target              string            `json:"target"`
	OtelEndpoint        string            `json:"otelEndpointOverride"`
}

// translateCreate turns Daytona's create body into sbx's. Everything is
// checked before the Manager is called, so a refused request makes nothing.
func (h *Handler) translateCreate(r *http.Request, in createRequest) (wire.CreateSandboxRequest, error) {
	unsupported := func(what string) error {
		return invalid(wire.CodeFeatureUnsupported, "%s is not supported by sbx's Daytona compatibility layer", what)
	}
	switch {
	case in.GPU > 0 || len(in.GPUType) > 0:
		return wire.CreateSandboxRequest{}, unsupported("gpu")
	case len(in.Secrets) > 0:
		return wire.CreateSandboxRequest{}, unsupported("secrets")
	case in.KVM:
		return wire.CreateSandboxRequest{}, unsupported("kvm")
	case in.LinkedSandbox != "":
		return wire.CreateSandboxRequest{}, unsupported("linkedSandbox")
	case in.OutboundProxyURL != "":
		return wire.CreateSandboxRequest{}, unsupported("outboundProxyUrl")
	case in.Spot:
		return wire.CreateSandboxRequest{}, unsupported("spot")
	case in.OtelEndpoint != "":
		return wire.CreateSandboxRequest{}, unsupported("otelEndpointOverride")
	case in.Target != "" && in.Target != target:
		return wire.CreateSandboxRequest{}, unsupported("target " + in.Target + " (sbx has one target, " + target + ")")
	case ownLabel(in.Labels) != "":
		return wire.CreateSandboxRequest{}, invalid(wire.CodeInvalidLabel, "label %s is sbx's own: set public instead", ownLabel(in.Labels))
	case in.User != "" && in.User != "root":
		return wire.CreateSandboxRequest{}, unsupported("user " + in.User + " (sbx runs the toolbox as root)")
	}
	for _, v := range []struct {
		name string
		min  *int
	}{{"autoStopInterval", in.AutoStopInterval}, {"autoPauseInterval", in.AutoPauseInterval}, {"autoArchiveInterval", in.AutoArchiveInterval}} {
		if v.min != nil && (*v.min < 0 || *v.min > maxIntervalMinutes) {
			return wire.CreateSandboxRequest{}, invalid(wire.CodeInvalidParameter, "%s must be from 0 to %d minutes, got %d", v.name, maxIntervalMinutes, *v.min)
		}
	}
	if d := in.AutoDeleteInterval; d != nil && *d > maxIntervalMinutes {
		return wire.CreateSandboxRequest{}, invalid(wire.CodeInvalidParameter, "autoDeleteInterval must be at most %d minutes, got %d", maxIntervalMinutes, *d)
	}
	if in.CPU < 0 || in.Memory < 0 || in.Disk < 0 || in.TTLMinutes < 0 || in.TTLMinutes > maxIntervalMinutes {
		return wire.CreateSandboxRequest{}, invalid(wire.CodeInvalidParameter, "cpu, memory, disk and ttlMinutes must not be negative")
	}
	req := wire.CreateSandboxRequest{
		Name: in.Name, Env: in.Env, Labels: in.Labels, CPU: in.CPU,
		MemoryMiB: int(math.Round(in.Memory * 1024)), DiskMiB: int(math.Round(in.Disk * 1024)),
		AutoStopSeconds: minutesToSeconds(in.AutoStopInterval), AutoPauseSeconds: minutesToSeconds(in.AutoPauseInterval),
		AutoArchiveSeconds: minutesToSeconds(in.AutoArchiveInterval), AutoDeleteSeconds: minutesToSeconds(in.AutoDeleteInterval),
		TTLSeconds: in.TTLMinutes * 60,
	}
	var err error
	if req.Volumes, err = volumeMounts(in.Volumes); err != nil {
		return wire.CreateSandboxRequest{}, err
	}
	if in.Public {
		req.Labels = withPublic(req.Labels, true)
	}
	// Daytona's auto-stop and auto-pause exclude each other; sbx's default
	// auto-stop must not collide with an auto-pause the caller asked for.
	if req.AutoPauseSeconds != nil && *req.AutoPauseSeconds > 0 && req.AutoStopSeconds == nil {
		zero := 0
		req.AutoStopSeconds = &zero
	}
	if in.NetworkBlockAll {
		req.Egress = &wire.EgressPolicy{Mode: wire.EgressBlockAll}
	} else if in.NetworkAllowList != "" || in.DomainAllowList != "" {
		req.Egress = &wire.EgressPolicy{Mode: wire.EgressAllowList, CIDRs: splitList(in.NetworkAllowList), Domains: splitList(in.DomainAllowList)}
	}
	if err := h.resolveImage(r, in, &req); err != nil {
		return wire.CreateSandboxRequest{}, err
	}
	return req, nil
}

// resolveImage fills in the image or snapshot: a Dockerfile that is only
// "FROM <image sbx has>" uses that image; any other is built (build.go)
// into an image named by its content, once; a snapshot name is an sbx
// image or snapshot.
func (h *Handler) resolveImage(r *http.Request, in createRequest, req *wire.CreateSandboxRequest) error {
	if b := in.BuildInfo; b != nil {
		if len(b.ContextHashes) > 0 {
			return invalid(wire.CodeDockerfileUnsupported, "images with build context (addLocalFile, addLocalDir) are not supported by sbx's Daytona compatibility layer; put the files in with runCommands or import the image into sbx")
		}
		img, ok := onlyFrom(b.DockerfileContent)
		if !ok {
			img = builtImageName(b.DockerfileContent)
			if _, err := h.cfg.Images.Get(r.Context(), img); errdefs.Is(err, errdefs.KindNotFound) {
				if _, err := h.buildImage(r, img, b.DockerfileContent); err != nil {
					return err
				}
			}
		}
		if _, err := h.cfg.Images.Get(r.Context(), img); err != nil {
			if errdefs.Is(err, errdefs.KindNotFound) {
				return invalid(wire.CodeImageNotFound, "image %q is not in sbx: pull or import it first (sbx image pull / sbx image import)", img)
			}
			return err
		}
		req.Image = img
		return nil
	}
	if in.Snapshot == "" {
		return nil // sbx's default image
	}
	if _, err := h.cfg.Images.Get(r.Context(), in.Snapshot); err == nil {
		req.Image = in.Snapshot
		return nil
	}
	req.Snapshot = in.Snapshot
	return nil
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
