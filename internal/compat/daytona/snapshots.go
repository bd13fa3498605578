package daytona

import (
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/wire"
)

// Daytona's snapshots are what sandboxes start from; on sbx those are its
// images and its snapshots, so daytona.snapshot.list/get show both (read
// only: images are made with `sbx image`, snapshots with createSnapshot).

type snapshotDTO struct {
	ID              string   `json:"id"`
	OrganizationID  string   `json:"organizationId"`
	General         bool     `json:"general"`
	Name            string   `json:"name"`
	ImageName       string   `json:"imageName,omitempty"`
	State           string   `json:"state"`
	Size            *float64 `json:"size"` // GB
	Entrypoint      []string `json:"entrypoint"`
	CPU             int      `json:"cpu"`
	GPU             int      `json:"gpu"`
	Mem             int      `json:"mem"`
	Disk            int      `json:"disk"`
	ErrorReason     *string  `json:"errorReason"`
	CreatedAt       string   `json:"createdAt"`
	UpdatedAt       string   `json:"updatedAt"`
	LastUsedAt      *string  `json:"lastUsedAt"`
	SourceSandboxID *string  `json:"sourceSandboxId"`
}

func sizeGB(b int64) *float64 {
	gb := float64(b) / 1e9
	return &gb
}

func imageSnapshot(img *store.Image) snapshotDTO {
	return snapshotDTO{ID: img.Name, OrganizationID: organizationID, General: true, Name: img.Name, ImageName: img.Name,
		State: "active", Size: sizeGB(img.SizeBytes), Entrypoint: img.Config.Entrypoint,
		CreatedAt: stamp(img.CreatedAt), UpdatedAt: stamp(img.CreatedAt)}
}

func sandboxSnapshot(s *store.Snapshot) snapshotDTO {
	src := s.SandboxID
	return snapshotDTO{ID: s.Name, OrganizationID: organizationID, Name: s.Name, ImageName: s.Spec.Image,
		State: "active", Size: sizeGB(s.SizeBytes), Entrypoint: s.Spec.Entrypoint, CPU: int(math.Ceil(s.Spec.CPU)),
		Mem: ceilDiv(s.Spec.MemoryMiB, 1024), Disk: ceilDiv(s.Spec.DiskMiB, 1024),
		CreatedAt: stamp(s.CreatedAt), UpdatedAt: stamp(s.CreatedAt), SourceSandboxID: &src}
}

// allSnapshots is every image and snapshot, by name.
func (h *Handler) allSnapshots(r *http.Request) ([]snapshotDTO, error) {
	imgs, err := h.cfg.Images.List(r.Context())
	if err != nil {
		return nil, err
	}
	snaps, err := h.cfg.Sandboxes.ListSnapshots(r.Context())
	if err != nil {
		return nil, err
	}
	out := []snapshotDTO{}
	for _, img := range imgs {
		out = append(out, imageSnapshot(img))
	}
	for _, s := range snaps {
		out = append(out, sandboxSnapshot(s))
	}
	slices.SortFunc(out, func(a, b snapshotDTO) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// listSnapshots serves GET /snapshots?page&limit (pages from 1).
func (h *Handler) listSnapshots(w http.ResponseWriter, r *http.Request) error {
	page, limit := 1, defaultPageSize
	for _, p := range []struct {
		name string
		dst  *int
	}{{"page", &page}, {"limit", &limit}} {
		if s := r.URL.Query().Get(p.name); s != "" {
			n, err := strconv.Atoi(s)
			if err != nil || n < 1 || (p.name == "limit" && n > maxPageSize) {
				return invalid(wire.CodeInvalidParameter, "%s must be a whole number from 1 (limit: to %d), got %q", p.name, maxPageSize, s)
			}
			*p.dst = n
		}
	}
	all, err := h.allSnapshots(r)
	if err != nil {
		return err
	}
	from := min((page-1)*limit, len(all))
	items := all[from:min(from+limit, len(all))]
	writeJSON(w, http.StatusOK, map[string]any{"items": items, "total": len(all), "page": page,
		"totalPages": (len(all) + limit - 1) / limit})
	return nil
}

// getSnapshot serves GET /snapshots/{name}: an image or a snapshot.
func (h *Handler) getSnapshot(w http.ResponseWriter, r *http.Request) error {
	name := r.PathValue("name")
	if img, err := h.cfg.Images.Get(r.Context(), name); err == nil {
		writeJSON(w, http.StatusOK, imageSnapshot(img))
		return nil
	}
	s, err := h.cfg.Sandboxes.GetSnapshot(r.Context(), name)
	if err != nil {
		if errdefs.Is(err, errdefs.KindNotFound) {
			return errdefs.NotFound(wire.CodeSnapshotNotFound, "no image or snapshot %q in sbx", name)
		}
		return err
	}
	writeJSON(w, http.StatusOK, sandboxSnapshot(s))
	return nil
}
