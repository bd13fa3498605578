package daytona

import (
	"math"
	"strings"
	"time"

	"github.com/sbxhq/sbx/internal/sandbox"
	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/wire"
)

// Translation between Daytona's wire types and sbx's: Daytona counts
// intervals in minutes and memory and disk in GiB, sbx in seconds and MiB.

// sandboxDTO is Daytona's Sandbox as the SDK reads it.
type sandboxDTO struct {
	ID                  string            `json:"id"`
	OrganizationID      string            `json:"organizationId"`
	Name                string            `json:"name"`
	Snapshot            string            `json:"snapshot,omitempty"`
	User                string            `json:"user"`
	Env                 map[string]string `json:"env"`
	Labels              map[string]string `json:"labels"`
	Public              bool              `json:"public"`
	NetworkBlockAll     bool              `json:"networkBlockAll"`
	NetworkAllowList    string            `json:"networkAllowList,omitempty"`
	Target              string            `json:"target"`
	CPU                 int               `json:"cpu"`
	GPU                 int               `json:"gpu"`
	Memory              int               `json:"memory"` // GiB
	Disk                int               `json:"disk"`   // GiB
	State               string            `json:"state"`
	DesiredState        string            `json:"desiredState,omitempty"`
	ErrorReason         string            `json:"errorReason,omitempty"`
	Recoverable         bool              `json:"recoverable"`
	BackupState         string            `json:"backupState"`
	AutoStopInterval    int               `json:"autoStopInterval"`        // minutes; 0: never
	AutoPauseInterval   int               `json:"autoPauseInterval"`       // minutes; 0: never
	AutoArchiveInterval int               `json:"autoArchiveInterval"`     // minutes
	AutoDeleteInterval  int               `json:"autoDeleteInterval"`      // minutes; -1: never, 0: on stop
	AutoDestroyAt       string            `json:"autoDestroyAt,omitempty"` // the TTL's end; none without a TTL
	Volumes             []sandboxVolume   `json:"volumes"`
	CreatedAt           string            `json:"createdAt"`
	UpdatedAt           string            `json:"updatedAt"`
	LastActivityAt      string            `json:"lastActivityAt,omitempty"`
	SandboxClass        string            `json:"sandboxClass,omitempty"`
	ToolboxProxyURL     string            `json:"toolboxProxyUrl"`
}

// organizationID is the one organization sbx shows Daytona clients.
const organizationID = "sbx"

// target is the one region sbx shows Daytona clients.
const target = "local"

// publicLabel marks a sandbox created public: its previews need no token.
// It is kept with the sandbox (a label sbx stores), not by this layer, and
// Daytona clients never see it among the labels.
const publicLabel = ownLabelPrefix + "public"

// ownLabelPrefix marks the labels the layer keeps for itself (public,
// signing-key): hidden from Daytona's labels, refused from the caller.
const ownLabelPrefix = "sbx.daytona/"

// ownLabel names a label of the layer's among labels, or "".
func ownLabel(labels map[string]string) string {
	for k := range labels {
		if strings.HasPrefix(k, ownLabelPrefix) {
			return k
		}
	}
	return ""
}

// withPublic returns labels with publicLabel set (public) or left out.
func withPublic(labels map[string]string, public bool) map[string]string {
	out := make(map[string]string, len(labels)+1)
	for k, v := range labels {
		if !strings.HasPrefix(k, ownLabelPrefix) {
			out[k] = v
		}
	}
	if public {
		out[publicLabel] = "true"
	}
	return out
}

// toDTO turns a stored sandbox into Daytona's Sandbox. toolbox is the
// toolbox proxy URL the SDK appends "/{id}" to.
func toDTO(sb *store.Sandbox, toolbox string) sandboxDTO {
	s, pol := sb.Spec, sandbox.PolicyOf(sb.Spec)
	d := sandboxDTO{
		ID: sb.ID, OrganizationID: organizationID, Name: sb.Name, Snapshot: s.Snapshot,
		User: "root", Env: s.Env, Labels: withPublic(s.Labels, false), Public: s.Labels[publicLabel] == "true", Target: target,
		CPU: int(math.Ceil(s.CPU)), Memory: ceilDiv(s.MemoryMiB, 1024), Disk: ceilDiv(s.DiskMiB, 1024),
		State: stateOf(sb.State), ErrorReason: sb.Error, BackupState: "None",
		Recoverable:      sb.State == wire.StateError, // recover starts it again (recover.go)
		AutoStopInterval: pol.AutoStopSeconds / 60, AutoPauseInterval: pol.AutoPauseSeconds / 60,
		AutoArchiveInterval: pol.AutoArchiveSeconds / 60, AutoDeleteInterval: deleteMinutes(pol.AutoDeleteSeconds),
		Volumes: []sandboxVolume{}, CreatedAt: stamp(sb.CreatedAt), UpdatedAt: stamp(sb.UpdatedAt),
		LastActivityAt: stamp(sb.LastActivityAt), SandboxClass: s.Class, ToolboxProxyURL: toolbox,
	}
	if pol.TTLSeconds > 0 { // as internal/sandbox/policy.go's plan counts it
		from := pol.TTLFrom
		if from.IsZero() {
			from = sb.CreatedAt
		}
		d.AutoDestroyAt = stamp(from.Add(time.Duration(pol.TTLSeconds) * time.Second))
	}
	for _, v := range s.Volumes {
		d.Volumes = append(d.Volumes, sandboxVolume{VolumeID: v.Name, MountPath: v.Path})
	}
	if d.Name == "" {
		d.Name = sb.ID // Daytona sandboxes always have a name
	}
	if d.Snapshot == "" {
		d.Snapshot = s.Image
	}
	if d.Env == nil {
		d.Env = map[string]string{}
	}
	if d.Labels == nil {
		d.Labels = map[string]string{}
	}
	if s.Network == wire.NetworkNone {
		d.NetworkBlockAll = true
	}
	if e := s.Egress; e != nil {
		switch e.Mode {
		case wire.EgressBlockAll:
			d.NetworkBlockAll = true
		case wire.EgressAllowList:
			d.NetworkAllowList = strings.Join(e.CIDRs, ",")
		}
	}
	return d
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

func ceilDiv(a, b int) int {
	if a <= 0 {
		return 0
	}
	return (a + b - 1) / b
}

// deleteMinutes is autoDeleteSeconds in Daytona's minutes: -1 (never) and
// 0 (on stop) stay as they are.
func deleteMinutes(sec int) int {
	if sec < 0 {
		return -1
	}
	return sec / 60
}

// minutesToSeconds turns a Daytona interval into sbx seconds; nil stays nil
// (the daemon's default). A negative autoDelete means never (-1).
func minutesToSeconds(min *int) *int {
	if min == nil {
		return nil
	}
	s := *min * 60
	if *min < 0 {
		s = -1
	}
	return &s
}

// stateOf is Daytona's name for an sbx state: the same names, but
// deleting and deleted are Daytona's destroying and destroyed.
func stateOf(s wire.State) string {
	switch s {
	case wire.StateDeleting:
		return "destroying"
	case wire.StateDeleted:
		return "destroyed"
	case wire.StateCreating, wire.StateStarting, wire.StateStarted, wire.StateStopping, wire.StateStopped,
		wire.StateError, wire.StatePausing, wire.StatePaused, wire.StateResuming,
		wire.StateArchiving, wire.StateArchived, wire.StateRestoring:
		return string(s)
	}
	return "unknown"
}
