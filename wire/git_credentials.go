package wire

// GitCredentialsRequest stores credentials for one git host in the
// sandbox's git credential store (~/.git-credentials, credential.helper
// store in the global git config): a later clone, push or pull of that
// host without credentials uses them, and so does a git program in the
// sandbox.
type GitCredentialsRequest struct {
	// The user name; with a token alone forges ignore it.
	Username string `json:"username"`
	// The password or token.
	Password string `json:"password"`
	// The host the credentials are for, with a port if not the scheme's default ("github.com", "git.example.com:8443").
	Host string `json:"host"`
	// "https" or "http".
	Protocol string `json:"protocol"`
}
