package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/sbxhq/sbx/sdk"
	"github.com/spf13/cobra"
)

// gitTokenEnv is where sbx git takes a token from when --git-token is not
// given, so it stays out of shell history and process lists.
const gitTokenEnv = "SBX_GIT_TOKEN"

func newGitCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "git COMMAND",
		Short: "Run git in a sandbox: clone, status, branches, checkout, add, commit, push, pull, log",
		Long: `Run git operations in a sandbox. The sandbox's agent runs them itself (go-git),
so they work in any image, with or without a git program.

Every command works on the repository at --path (-C) inside the sandbox,
absolute or relative to its working directory (default: the working
directory). Over HTTP(S), --git-user and --git-token (or $` + gitTokenEnv + `)
authenticate the one call; they are not written into the sandbox unless
clone gets --store-credentials. A server that refuses them fails with
GIT_AUTH_FAILED.`,
		Example: `  export ` + gitTokenEnv + `=ghp_…
  sbx git clone box https://github.com/me/app.git app
  sbx git status box -C app
  sbx git checkout box feature --create -C app
  sbx git add box -C app .
  sbx git commit box -C app -m "fix" --author-name Ann --author-email ann@example.com
  sbx git push box -C app
  sbx git log box -C app -n 5`,
		Args: noSubcommand,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newGitCloneCmd(g), newGitStatusCmd(g), newGitBranchesCmd(g), newGitCheckoutCmd(g),
		newGitAddCmd(g), newGitCommitCmd(g), newGitSyncCmd(g, "push"), newGitSyncCmd(g, "pull"), newGitLogCmd(g))
	return cmd
}

// gitCreds are the credential flags of clone, push and pull.
type gitCreds struct{ user, token string }

func addGitCreds(cmd *cobra.Command) *gitCreds {
	c := &gitCreds{}
	cmd.Flags().StringVar(&c.user, "git-user", "", `user name for an HTTP(S) remote (default "git" when only a token is given)`)
	cmd.Flags().StringVar(&c.token, "git-token", "", "token or password for an HTTP(S) remote (default $"+gitTokenEnv+")")
	return c
}

func (c *gitCreds) resolve() (string, string) {
	if c.token == "" {
		c.token = os.Getenv(gitTokenEnv)
	}
	return c.user, c.token
}

func addGitPath(cmd *cobra.Command) *string {
	var p string
	cmd.Flags().StringVarP(&p, "path", "C", "", "the repository inside the sandbox (default: the working directory)")
	return &p
}

func newGitCloneCmd(g *globals) *cobra.Command {
	var (
		req   sdk.GitCloneRequest
		store bool
	)
	cmd := &cobra.Command{
		Use:   "clone SANDBOX URL [PATH]",
		Short: "Clone a repository into a sandbox",
		Long: `Clone URL (https://, http:// or file://) into PATH inside SANDBOX (default: the
repository's name under the working directory). PATH must be absent or empty;
a failed clone leaves nothing behind.`,
		Example: `  sbx git clone box https://github.com/me/app.git
  sbx git clone box https://git.example.com/team/app.git /src/app --branch dev --depth 1`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) < 2 || len(args) > 3 {
				return usagef("%s takes SANDBOX, URL and optionally PATH (got %d arguments)", cmd.CommandPath(), len(args))
			}
			return nil
		},
	}
	out := addOutputFlag(cmd)
	creds := addGitCreds(cmd)
	cmd.Flags().StringVar(&req.Branch, "branch", "", "check out this branch (default: the remote's HEAD)")
	cmd.Flags().IntVar(&req.Depth, "depth", 0, "a shallow clone of this many commits")
	cmd.Flags().BoolVar(&store, "store-credentials", false, "keep the credentials in the sandbox (~/.git-credentials) for later pushes and pulls")
	cmd.Flags().IntVar(&req.TimeoutSeconds, "timeout", 0, "give up after this many seconds (default 300)")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if err := out.check(); err != nil {
			return err
		}
		c, err := g.client()
		if err != nil {
			return err
		}
		req.URL, req.StoreCredentials = args[1], store
		if len(args) == 3 {
			req.Path = args[2]
		}
		req.Username, req.Token = creds.resolve()
		st, err := c.GitClone(cmd.Context(), args[0], req)
		if err != nil {
			return err
		}
		return out.print(cmd.OutOrStdout(), st, func(w io.Writer) error { return printGitStatus(w, st) })
	}
	return cmd
}

func newGitStatusCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "status SANDBOX",
		Short: "Show a repository's branch, HEAD and changed files",
		Args:  exactArgs(1, "SANDBOX"),
	}
	out := addOutputFlag(cmd)
	path := addGitPath(cmd)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		return callPrint(g, out, cmd, func(c *sdk.Client) (*sdk.GitStatus, error) {
			return c.GitStatus(cmd.Context(), args[0], *path)
		}, printGitStatus)
	}
	return cmd
}

func newGitBranchesCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "branches SANDBOX",
		Short: "List a repository's branches; * marks the current one",
		Args:  exactArgs(1, "SANDBOX"),
	}
	out := addOutputFlag(cmd)
	path := addGitPath(cmd)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if err := out.check(); err != nil {
			return err
		}
		c, err := g.client()
		if err != nil {
			return err
		}
		br, err := c.GitBranches(cmd.Context(), args[0], *path)
		if err != nil {
			return err
		}
		return out.print(cmd.OutOrStdout(), br, func(w io.Writer) error {
			for _, b := range br.Local {
				mark := " "
				if b == br.Current {
					mark = "*"
				}
				fmt.Fprintf(w, "%s %s\n", mark, b)
			}
			for _, b := range br.Remote {
				fmt.Fprintf(w, "  remotes/%s\n", b)
			}
			return nil
		})
	}
	return cmd
}

func newGitCheckoutCmd(g *globals) *cobra.Command {
	var req sdk.GitCheckoutRequest
	cmd := &cobra.Command{
		Use:   "checkout SANDBOX BRANCH",
		Short: "Switch a repository to a branch",
		Long: `Switch to BRANCH. With --create it is made at HEAD first; a branch only origin
has is made from origin's. Uncommitted changes to tracked files refuse the
checkout (GIT_CONFLICT) unless --force, which throws them away.`,
		Args: exactArgs(2, "SANDBOX and BRANCH"),
	}
	out := addOutputFlag(cmd)
	path := addGitPath(cmd)
	cmd.Flags().BoolVar(&req.Create, "create", false, "make the branch at HEAD")
	cmd.Flags().BoolVar(&req.Force, "force", false, "throw away uncommitted changes")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		return callPrint(g, out, cmd, func(c *sdk.Client) (*sdk.GitStatus, error) {
			req.Path, req.Branch = *path, args[1]
			return c.GitCheckout(cmd.Context(), args[0], req)
		}, printGitStatus)
	}
	return cmd
}

func newGitAddCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "add SANDBOX FILE...",
		Short: `Stage files ("." stages every change, removals too)`,
		Args:  minArgs(2, "SANDBOX and at least one FILE"),
	}
	out := addOutputFlag(cmd)
	path := addGitPath(cmd)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		return callPrint(g, out, cmd, func(c *sdk.Client) (*sdk.GitStatus, error) {
			return c.GitAdd(cmd.Context(), args[0], sdk.GitAddRequest{Path: *path, Files: args[1:]})
		}, printGitStatus)
	}
	return cmd
}

func newGitCommitCmd(g *globals) *cobra.Command {
	var req sdk.GitCommitRequest
	cmd := &cobra.Command{
		Use:   "commit SANDBOX -m MESSAGE",
		Short: "Commit what is staged",
		Long: `Commit what is staged (with --all, changes to tracked files too). The author
defaults to user.name and user.email of the repository's or the global git
config in the sandbox.`,
		Args: exactArgs(1, "SANDBOX"),
	}
	out := addOutputFlag(cmd)
	path := addGitPath(cmd)
	cmd.Flags().StringVarP(&req.Message, "message", "m", "", "the commit message (required)")
	cmd.Flags().StringVar(&req.AuthorName, "author-name", "", "author name")
	cmd.Flags().StringVar(&req.AuthorEmail, "author-email", "", "author email")
	cmd.Flags().BoolVarP(&req.All, "all", "a", false, "stage changes to tracked files first")
	cmd.Flags().BoolVar(&req.AllowEmpty, "allow-empty", false, "commit even when nothing changed")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if err := out.check(); err != nil {
			return err
		}
		if req.Message == "" {
			return usagef("%s needs a message (-m)", cmd.CommandPath())
		}
		c, err := g.client()
		if err != nil {
			return err
		}
		req.Path = *path
		commit, err := c.GitCommit(cmd.Context(), args[0], req)
		if err != nil {
			return err
		}
		return out.print(cmd.OutOrStdout(), commit, func(w io.Writer) error { return printGitLog(w, []sdk.GitCommit{*commit}) })
	}
	return cmd
}

// newGitSyncCmd is push or pull.
func newGitSyncCmd(g *globals, op string) *cobra.Command {
	var req sdk.GitSyncRequest
	cmd := &cobra.Command{
		Use:   op + " SANDBOX",
		Short: "Push a branch to a remote",
		Args:  exactArgs(1, "SANDBOX"),
	}
	if op == "pull" {
		cmd.Short = "Fetch a branch and fast-forward the current one to it"
		cmd.Long = "Fetch a branch from a remote and fast-forward the current branch to it; a pull\nthat needs a merge fails with GIT_CONFLICT."
	}
	out := addOutputFlag(cmd)
	path := addGitPath(cmd)
	creds := addGitCreds(cmd)
	cmd.Flags().StringVar(&req.Remote, "remote", "", `the remote (default "origin")`)
	cmd.Flags().StringVar(&req.Branch, "branch", "", "the branch (default: the current one)")
	cmd.Flags().IntVar(&req.TimeoutSeconds, "timeout", 0, "give up after this many seconds (default 300)")
	if op == "push" {
		cmd.Flags().BoolVar(&req.Force, "force", false, "overwrite the remote branch even when it is not a fast-forward")
	}
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if err := out.check(); err != nil {
			return err
		}
		c, err := g.client()
		if err != nil {
			return err
		}
		req.Path = *path
		req.Username, req.Token = creds.resolve()
		call := c.GitPush
		if op == "pull" {
			call = c.GitPull
		}
		res, err := call(cmd.Context(), args[0], req)
		if err != nil {
			return err
		}
		return out.print(cmd.OutOrStdout(), res, func(w io.Writer) error {
			state := op + "ed"
			if res.UpToDate {
				state = "already up to date"
			}
			_, err := fmt.Fprintf(w, "%s: %s (%s)\n", res.Branch, state, shortHash(res.Head))
			return err
		})
	}
	return cmd
}

func newGitLogCmd(g *globals) *cobra.Command {
	var req sdk.GitLogRequest
	cmd := &cobra.Command{
		Use:   "log SANDBOX",
		Short: "List the commits reachable from HEAD, newest first",
		Args:  exactArgs(1, "SANDBOX"),
	}
	out := addOutputFlag(cmd)
	path := addGitPath(cmd)
	cmd.Flags().IntVarP(&req.Limit, "max-count", "n", 0, "at most this many commits (default 50, at most 1000)")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		return callPrint(g, out, cmd, func(c *sdk.Client) ([]sdk.GitCommit, error) {
			req.Path = *path
			return c.GitLog(cmd.Context(), args[0], req)
		}, printGitLog)
	}
	return cmd
}

func printGitStatus(w io.Writer, st *sdk.GitStatus) error {
	branch := st.Branch
	if branch == "" {
		branch = "(detached HEAD)"
	}
	fmt.Fprintf(w, "%s on %s at %s\n", st.Path, branch, orDash(shortHash(st.Head)))
	if st.Clean {
		_, err := fmt.Fprintln(w, "clean")
		return err
	}
	tw := newTable(w)
	fmt.Fprintln(tw, "STAGED\tWORKTREE\tPATH")
	for _, f := range st.Files {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", f.Staging, f.Worktree, f.Path)
	}
	return tw.Flush()
}

func printGitLog(w io.Writer, log []sdk.GitCommit) error {
	for _, c := range log {
		subject, _, _ := strings.Cut(strings.TrimSpace(c.Message), "\n")
		fmt.Fprintf(w, "%s %s <%s> %s  %s\n", shortHash(c.Hash), c.AuthorName, c.AuthorEmail, c.Time.Format("2006-01-02 15:04"), subject)
	}
	return nil
}

func shortHash(h string) string {
	if len(h) > 10 {
		return h[:10]
	}
	return h
}
