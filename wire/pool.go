package wire

import "time"

// PoolTemplate is what every instance of a pool is made from: the fields
// of CreateSandboxRequest that shape an instance. A create matches it when
// its own resolved values of these fields are the same (env may differ:
// it is applied at adoption; egress too).
type PoolTemplate struct {
	// The image instances start from; as in a create.
	Image string `json:"image,omitempty"`
	// "container" or "gvisor"; as in a create.
	Class string `json:"class,omitempty"`
	// CPU limit in cores; as in a create.
	CPU float64 `json:"cpu,omitempty"`
	// Memory limit in MiB; as in a create.
	MemoryMiB int `json:"memoryMiB,omitempty"`
	// The most processes and threads at once; as in a create.
	PidsLimit int `json:"pidsLimit,omitempty"`
	// Size of each instance's own filesystem in MiB; 0: shares the host's.
	DiskMiB int `json:"diskMiB,omitempty"`
	// The directory commands run in; as in a create.
	Workdir string `json:"workdir,omitempty"`
	// Environment the instances start with; a create's env is applied on adoption.
	Env map[string]string `json:"env,omitempty"`
	// "bridge" or "none"; as in a create.
	Network string `json:"network,omitempty"`
	// The egress policy instances start with; a create's egress replaces it on adoption.
	Egress *EgressPolicy `json:"egress,omitempty"`
}

// CreatePoolRequest makes a warm pool. Min instances are kept ready; after
// a burst of creates the pool grows towards Max (see Pool.Target).
type CreatePoolRequest struct {
	// The pool's name, unique in the team; a create's pool field names it.
	Name string `json:"name"`
	// What every instance is made from.
	Template PoolTemplate `json:"template"`
	Min      int          `json:"min"`           // instances kept ready, 0 to 100
	Max      int          `json:"max,omitempty"` // at least Min; default Min
}

// UpdatePoolRequest resizes a pool; nil fields are left as they are.
type UpdatePoolRequest struct {
	// Instances kept ready, 0 to 100. Absent: unchanged.
	Min *int `json:"min,omitempty"`
	// The most instances it fills to, at least min. Absent: unchanged.
	Max *int `json:"max,omitempty"`
}

// Pool is a warm pool and how full it is.
type Pool struct {
	// The pool's name.
	Name string `json:"name"`
	// What every instance is made from.
	Template PoolTemplate `json:"template"`
	// Instances kept ready at least.
	Min int `json:"min"`
	// The most instances it fills to.
	Max int `json:"max"`
	// Target is how many instances the pool fills to now: Min plus the
	// creates it served in the last minute, at most Max.
	Target   int `json:"target"`
	Ready    int `json:"ready"`    // started, waiting to be adopted
	Starting int `json:"starting"` // being started by the refill
	// Adopted and Missed count, since the daemon started, the creates
	// that took an instance and those that matched the pool but found it
	// empty (and started cold).
	Adopted int64 `json:"adopted"`
	// Creates since the daemon started that matched the pool but found it empty and started cold.
	Missed int64 `json:"missed"`
	// When the pool was made.
	CreatedAt time.Time `json:"createdAt"`
}
