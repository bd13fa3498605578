package ui

import (
	"bufio"
	"context"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/sbxhq/sbx/internal/auth"
	"github.com/sbxhq/sbx/internal/doctor"
	"github.com/sbxhq/sbx/internal/httpjson"
	"github.com/sbxhq/sbx/internal/store"
)

// SystemConfig is what the System page reads of the daemon.
type SystemConfig struct {
	DataDir     string
	Doctor      doctor.Config
	WebhookURLs int
	// Webhooks reports the events waiting for delivery and those dropped
	// on a full queue (webhook.Sender.Queues).
	Webhooks func() (queued int, dropped uint64)
}

// System answers GET /ui/system (admin keys only: it describes the host).
type System struct {
	Version  doctor.VersionInfo `json:"version"`
	Doctor   []doctor.Result    `json:"doctor"`
	Capacity Capacity           `json:"capacity"`
	Webhooks WebhookQueue       `json:"webhooks"`
	Sessions int                `json:"dashboardSessions"`
	Time     time.Time          `json:"time"`
}

// Capacity is how full the host is.
type Capacity struct {
	Sandboxes       map[string]int `json:"sandboxes"` // by state
	MemoryBytes     uint64         `json:"memoryBytes"`
	MemoryAvailable uint64         `json:"memoryAvailableBytes"`
	DiskBytes       uint64         `json:"diskBytes"` // the data dir's filesystem
	DiskFreeBytes   uint64         `json:"diskFreeBytes"`
}

// WebhookQueue is the state of event delivery to webhooks.
type WebhookQueue struct {
	URLs    int    `json:"urls"`
	Queued  int    `json:"queued"`
	Dropped uint64 `json:"dropped"`
}

// doctorCache keeps the doctor's results a little: its checks run programs.
type doctorCache struct {
	mu      sync.Mutex
	at      time.Time
	version doctor.VersionInfo
	results []doctor.Result
}

const doctorTTL = 30 * time.Second

func (c *doctorCache) get(ctx context.Context, cfg doctor.Config) (doctor.VersionInfo, []doctor.Result) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.results == nil || time.Since(c.at) > doctorTTL {
		h := doctor.LocalHost()
		c.version, c.results, c.at = doctor.Version(ctx, h), doctor.Run(ctx, h, cfg), time.Now()
	}
	return c.version, c.results
}

func (u *UI) system(w http.ResponseWriter, r *http.Request, _ *session, p auth.Principal) {
	sc := u.cfg.System
	if sc == nil {
		sc = &SystemConfig{}
	}
	out := System{Sessions: u.sessions.count(), Time: time.Now().UTC()}
	out.Version, out.Doctor = u.doctor.get(r.Context(), sc.Doctor)
	list, err := u.cfg.Sandboxes.List(auth.WithPrincipal(r.Context(), p), store.Filter{})
	if err != nil {
		httpjson.WriteError(w, err)
		return
	}
	out.Capacity.Sandboxes = map[string]int{}
	for _, sb := range list {
		out.Capacity.Sandboxes[string(sb.State)]++
	}
	out.Capacity.MemoryBytes, out.Capacity.MemoryAvailable = meminfo()
	var st unix.Statfs_t
	if sc.DataDir != "" && unix.Statfs(sc.DataDir, &st) == nil {
		out.Capacity.DiskBytes, out.Capacity.DiskFreeBytes = st.Blocks*uint64(st.Bsize), st.Bavail*uint64(st.Bsize)
	}
	out.Webhooks.URLs = sc.WebhookURLs
	if sc.Webhooks != nil {
		out.Webhooks.Queued, out.Webhooks.Dropped = sc.Webhooks()
	}
	httpjson.Write(w, http.StatusOK, out)
}

// meminfo reads the host's total and available memory.
func meminfo() (total, available uint64) {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0, 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 2 {
			continue
		}
		kib, _ := strconv.ParseUint(fields[1], 10, 64)
		switch fields[0] {
		case "MemTotal:":
			total = kib << 10
		case "MemAvailable:":
			available = kib << 10
		}
	}
	return total, available
}
