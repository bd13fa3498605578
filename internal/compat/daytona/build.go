package daytona

import (
	"archive/tar"
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/wire"
)

// Daytona's declarative images (Image.base(…).runCommands(…).env(…)…) reach
// the API as a Dockerfile: snapshot.create's buildInfo, or create's for an
// image made on the fly. sbx builds it with its own image builder (the
// route POST /v1/images/build, internal/build): RUN steps run in build
// sandboxes from the FROM image, which must be an sbx image or one its
// registry serves. What the SDK uploads to object storage (addLocalFile,
// addLocalDir) has nowhere to go: the SDK asks for push access first, a
// route this layer refuses by name.

// buildInfo is Daytona's CreateBuildInfo.
type buildInfo struct {
	DockerfileContent string   `json:"dockerfileContent"`
	ContextHashes     []string `json:"contextHashes"`
}

// buildImage builds dockerfile into the sbx image name; a failed build is
// its error event as an error.
func (h *Handler) buildImage(r *http.Request, name, dockerfile string) (*wire.Image, error) {
	var ctx bytes.Buffer // the build context: the Dockerfile alone
	tw := tar.NewWriter(&ctx)
	tw.WriteHeader(&tar.Header{Name: "Dockerfile", Mode: 0o644, Size: int64(len(dockerfile)), Typeflag: tar.TypeReg})
	tw.Write([]byte(dockerfile))
	tw.Close()
	rec, err := h.native(r, "POST", "/v1/images/build", url.Values{"name": {name}}, &ctx, "application/x-tar")
	if err != nil {
		return nil, err
	}
	sc := bufio.NewScanner(&rec.body)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		var ev wire.BuildEvent
		if json.Unmarshal(sc.Bytes(), &ev) != nil {
			continue
		}
		switch {
		case ev.Type == "done" && ev.Image != nil:
			return ev.Image, nil
		case ev.Type == "error" && ev.Error != nil:
			msg := ev.Error.Message
			if out := strings.TrimSpace(ev.Output); out != "" {
				msg += ": " + out
			}
			return nil, invalid(ev.Error.Code, "%s", msg)
		}
	}
	return nil, errdefs.Internal(sc.Err(), "the build of %s ended without a result", name)
}

// onlyFrom reports the image of a Dockerfile that is "FROM <image>" and
// nothing else (comments and blank lines aside): no build needed.
func onlyFrom(dockerfile string) (string, bool) {
	image := ""
	for _, line := range strings.Split(dockerfile, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if !strings.EqualFold(f[0], "FROM") || len(f) != 2 || image != "" {
			return "", false
		}
		image = f[1]
	}
	return image, image != ""
}

// builtImageName is the sbx image a create's Dockerfile builds into: the
// same Dockerfile is built once and reused.
func builtImageName(dockerfile string) string {
	sum := sha256.Sum256([]byte(dockerfile))
	return "daytona-build-" + hex.EncodeToString(sum[:6])
}

// createSnapshotRequest is Daytona's CreateSnapshot.
type createSnapshotRequest struct {
	Name         string     `json:"name"`
	ImageName    string     `json:"imageName"`
	Entrypoint   []string   `json:"entrypoint"`
	BuildInfo    *buildInfo `json:"buildInfo"`
	CPU          float64    `json:"cpu"`
	GPU          float64    `json:"gpu"`
	GPUType      []string   `json:"gpuType"`
	Memory       float64    `json:"memory"`
	Disk         float64    `json:"disk"`
	RegionID     string     `json:"regionId"`
	SandboxClass string     `json:"sandboxClass"`
}

// createSnapshotFromImage serves POST /snapshots: snapshot.create builds
// the image (an sbx image named as the snapshot) before it answers, so the
// SDK finds it active, or failed with the build's reason.
func (h *Handler) createSnapshotFromImage(w http.ResponseWriter, r *http.Request) error {
	var in createSnapshotRequest
	if err := decodeStrict(w, r, &in); err != nil {
		return err
	}
	unsupported := func(what string) error {
		return invalid(wire.CodeFeatureUnsupported, "snapshot %s is not supported by sbx's Daytona compatibility layer", what)
	}
	switch {
	case in.Name == "":
		return invalid(wire.CodeInvalidImageName, "name is required: the snapshot to make")
	case in.CPU != 0 || in.Memory != 0 || in.Disk != 0:
		return unsupported("resources (cpu, memory, disk): sbx images carry none; give them at create")
	case in.GPU != 0 || len(in.GPUType) > 0:
		return unsupported("gpu")
	case in.RegionID != "" && in.RegionID != target:
		return unsupported("regionId " + in.RegionID + " (sbx has one region, " + target + ")")
	case in.SandboxClass != "":
		return unsupported("sandboxClass: give the class at create")
	case in.BuildInfo != nil && len(in.BuildInfo.ContextHashes) > 0:
		return unsupported("build context (addLocalFile, addLocalDir)")
	case in.BuildInfo == nil && in.ImageName == "":
		return invalid(wire.CodeInvalidParameter, "imageName or buildInfo is required")
	}
	if _, err := h.cfg.Images.Get(r.Context(), in.Name); err == nil {
		return errdefs.Conflict(wire.CodeNameTaken, "an image or snapshot named %q is already in sbx", in.Name)
	}
	dockerfile := "FROM " + in.ImageName + "\n"
	if in.BuildInfo != nil {
		dockerfile = in.BuildInfo.DockerfileContent
	}
	if len(in.Entrypoint) > 0 {
		ep, _ := json.Marshal(in.Entrypoint)
		dockerfile += "ENTRYPOINT " + string(ep) + "\n"
	}
	img, err := h.buildImage(r, in.Name, dockerfile)
	if err != nil {
		if errdefs.KindOf(err) != errdefs.KindInvalid || errdefs.CodeOf(err) != wire.CodeBuildFailed {
			return err
		}
		// A step that failed: Daytona's build_failed snapshot with the reason.
		reason := err.Error()
		writeJSON(w, http.StatusOK, snapshotDTO{ID: in.Name, OrganizationID: organizationID, Name: in.Name,
			State: "build_failed", ErrorReason: &reason, Entrypoint: in.Entrypoint})
		return nil
	}
	stored, err := h.cfg.Images.Get(r.Context(), img.Name)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, imageSnapshot(stored))
	return nil
}

// deleteSnapshot serves DELETE /snapshots/{name}: an sbx image (as `sbx
// image rm`, refused while a sandbox uses it) or an sbx snapshot.
func (h *Handler) deleteSnapshot(w http.ResponseWriter, r *http.Request) error {
	name := r.PathValue("name")
	_, err := h.native(r, "DELETE", "/v1/images/"+url.PathEscape(name), nil, nil, "")
	if errdefs.CodeOf(err) == wire.CodeImageNotFound {
		_, err = h.native(r, "DELETE", "/v1/snapshots/"+url.PathEscape(name), nil, nil, "")
		if errdefs.CodeOf(err) == wire.CodeSnapshotNotFound {
			return errdefs.NotFound(wire.CodeSnapshotNotFound, "no image or snapshot %q in sbx", name)
		}
	}
	if err != nil {
		return err
	}
	w.WriteHeader(http.StatusOK)
	return nil
}

// activateSnapshot serves POST /snapshots/{name}/activate: sbx's images
// and snapshots are always active (none is deactivated after disuse), so
// it answers the snapshot as it is.
func (h *Handler) activateSnapshot(w http.ResponseWriter, r *http.Request) error {
	return h.getSnapshot(w, r)
}
