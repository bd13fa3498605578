package agentapi

// Bounds of the file operations of internal/agent/fileops.go (bodies:
// sdk/fileops.go), each under the route's AnswerLimit.
const (
	MaxGrepMatches = 10000
	MaxGlobFiles   = 50000
	MaxReplaceFile = 64 << 20 // a file Replace rewrites
)
