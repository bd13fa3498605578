package wire

// GitConfigRequest reads or sets one git configuration option (the agent's
// git config operation).
type GitConfigRequest struct {
	// The repository's worktree for the "local" scope; a relative path starts at the workdir.
	Path string `json:"path,omitempty"`
	// "global" (the toolbox user's ~/.gitconfig, as `git config --global`) or "local" (the repository's). Default: "global".
	Scope string `json:"scope,omitempty"`
	// The option, as git names it: "user.name", "remote.origin.url".
	Key string `json:"key"`
	// The value to set; absent: read the option.
	Value *string `json:"value,omitempty"`
}

// GitConfigValue is an option's value.
type GitConfigValue struct {
	// The value; absent when the option is not set.
	Value *string `json:"value,omitempty"`
}
