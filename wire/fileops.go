package wire

// PermissionsRequest is the body of POST …/files/permissions; empty fields
// are left as they are.
type PermissionsRequest struct {
	// The file or directory; relative paths start at the workdir.
	Path string `json:"path"`
	// Octal permission bits, e.g. "0644"; empty: unchanged.
	Mode string `json:"mode,omitempty"`
	// A user of the sandbox's /etc/passwd, or a uid; empty: unchanged.
	Owner string `json:"owner,omitempty"`
	// A group of the sandbox's /etc/group, or a gid; empty: unchanged.
	Group string `json:"group,omitempty"`
}

// GrepRequest is the body of POST …/files/grep: lines of the text files
// under Path that contain Pattern (a plain string, or with Regex a regular
// expression).
type GrepRequest struct {
	// The directory (or file) to search; relative paths start at the workdir.
	Path string `json:"path"`
	// The string a line must contain (a regular expression with regex).
	Pattern string `json:"pattern"`
	// Pattern is a regular expression (RE2 syntax, as Go's regexp) that
	// must match somewhere in the line, instead of a plain string.
	Regex bool `json:"regex,omitempty"`
	// At most this many matches; 0: the agent's bound (10000).
	Max int `json:"max,omitempty"`
}

// GrepMatch is one line that matched.
type GrepMatch struct {
	// The file the line is in.
	File string `json:"file"`
	// The line's number, from 1.
	Line int `json:"line"`
	// The line's text.
	Content string `json:"content"`
}

// GrepResult is the answer of …/files/grep.
type GrepResult struct {
	// The lines that matched, file by file.
	Matches []GrepMatch `json:"matches"`
	// Max (or the agent's bound) stopped the search: there may be more.
	Truncated bool `json:"truncated"`
}

// GlobRequest is the body of POST …/files/glob: the files and directories
// under Path whose name matches Pattern (path.Match syntax, as find -name).
type GlobRequest struct {
	// The directory to search; relative paths start at the workdir.
	Path string `json:"path"`
	// A name pattern, as find -name: *, ? and [a-z].
	Pattern string `json:"pattern"`
	// At most this many names; 0: the agent's bound (50000).
	Max int `json:"max,omitempty"`
}

// GlobResult is the answer of …/files/glob.
type GlobResult struct {
	// The paths whose name matched.
	Files []string `json:"files"`
	// Max (or the agent's bound) stopped the search: there may be more.
	Truncated bool `json:"truncated"`
}

// ReplaceRequest is the body of POST …/files/replace: every Old in each
// file becomes New.
type ReplaceRequest struct {
	// The files to rewrite (each at most 64 MiB).
	Files []string `json:"files"`
	// The string to replace.
	Old string `json:"old"`
	// What replaces it.
	New string `json:"new"`
}

// ReplaceResult is one file's outcome of …/files/replace.
type ReplaceResult struct {
	// The file.
	File string `json:"file"`
	// How many occurrences were replaced.
	Replaced int `json:"replaced"`
	// Why the file was not rewritten; empty on success.
	Error string `json:"error,omitempty"`
}

// User is an account of the sandbox's /etc/passwd (GET …/user).
type User struct {
	// The account's name.
	Name string `json:"name"`
	// Its user id.
	UID uint32 `json:"uid"`
	// Its primary group id.
	GID uint32 `json:"gid"`
	// Its home directory.
	Home string `json:"home"`
}
