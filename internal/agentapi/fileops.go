package agentapi

// Bodies of the file operations of internal/agent/fileops.go: permissions,
// search by content and by name, and replace, all done by the agent next to
// the files so no caller reads a tree through itself.

// PermissionsRequest is the body of SetPermissions; empty fields are left
// as they are.
type PermissionsRequest struct {
	Path  string `json:"path"`
	Mode  string `json:"mode,omitempty"`  // octal permission bits, e.g. "0644"
	Owner string `json:"owner,omitempty"` // a user of the sandbox's /etc/passwd, or a uid
	Group string `json:"group,omitempty"` // a group of the sandbox's /etc/group, or a gid
}

// GrepRequest is the body of Grep: lines of the text files under Path that
// contain Pattern (a plain string, not a regular expression).
type GrepRequest struct {
	Path    string `json:"path"`
	Pattern string `json:"pattern"`
	Max     int    `json:"max,omitempty"` // matches; 0: MaxGrepMatches
}

// GrepMatch is one line that matched.
type GrepMatch struct {
	File    string `json:"file"`
	Line    int    `json:"line"` // from 1
	Content string `json:"content"`
}

// GrepResult is Grep's answer; Truncated says Max stopped it.
type GrepResult struct {
	Matches   []GrepMatch `json:"matches"`
	Truncated bool        `json:"truncated"`
}

// GlobRequest is the body of Glob: the files and directories under Path
// whose name matches Pattern (path.Match syntax, as find -name).
type GlobRequest struct {
	Path    string `json:"path"`
	Pattern string `json:"pattern"`
	Max     int    `json:"max,omitempty"` // names; 0: MaxGlobFiles
}

// GlobResult is Glob's answer; Truncated says Max stopped it.
type GlobResult struct {
	Files     []string `json:"files"`
	Truncated bool     `json:"truncated"`
}

// ReplaceRequest is the body of Replace: every Old in each file becomes New.
type ReplaceRequest struct {
	Files []string `json:"files"`
	Old   string   `json:"old"`
	New   string   `json:"new"`
}

// ReplaceResult is one file's outcome; Error is empty on success.
type ReplaceResult struct {
	File     string `json:"file"`
	Replaced int    `json:"replaced"`
	Error    string `json:"error,omitempty"`
}

// User is an account of the sandbox (LookupUser's answer).
type User struct {
	Name string `json:"name"`
	UID  uint32 `json:"uid"`
	GID  uint32 `json:"gid"`
	Home string `json:"home"`
}

// Bounds of the answers (each under the route's AnswerLimit).
const (
	MaxGrepMatches = 10000
	MaxGlobFiles   = 50000
	MaxReplaceFile = 64 << 20 // a file Replace rewrites
)
