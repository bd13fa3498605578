// Command per-user-sandbox keeps one sandbox per user, addressed by a name
// made from the user's id: the first visit creates it, every later visit
// finds it again, whether it is running or was stopped for being idle. A
// stopped sandbox starts again on the first call that needs it, with its
// files as they were. The sandbox is the user's identity; instances come
// and go under it.
//
//	SBX_HOST=http://127.0.0.1:7423 SBX_TOKEN=… go run ./examples/per-user-sandbox -user alice -note "hello"
//
// See README.md.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"time"

	"github.com/sbxhq/sbx/sdk"
)

func main() {
	user := flag.String("user", "alice", "the user whose sandbox to use")
	note := flag.String("note", "", "a line to add to the user's notes.txt")
	idle := flag.Duration("idle", 15*time.Minute, "stop the sandbox after this long without use (kept stopped, files and all)")
	waitStop := flag.Bool("wait-stop", false, "afterwards, wait until the idle policy has stopped the sandbox")
	forget := flag.Bool("forget", false, "delete the user's sandbox and everything in it")
	flag.Parse()
	log.SetFlags(0)
	if err := run(context.Background(), *user, *note, *idle, *waitStop, *forget); err != nil {
		log.Fatalf("per-user-sandbox: %v", err)
	}
}

func run(ctx context.Context, user, note string, idle time.Duration, waitStop, forget bool) error {
	c, err := sdk.FromEnv()
	if err != nil {
		return err
	}
	name := "user-" + user // one name per user: the key of get-or-create
	if forget {
		if err := c.DeleteSandbox(ctx, name, true); err != nil {
			return err
		}
		fmt.Printf("deleted %s\n", name)
		return nil
	}

	// Get-or-create by name. The request is used only when the sandbox does
	// not exist yet; concurrent visits of one user all get the same one.
	sb, created, err := c.EnsureSandbox(ctx, name, sdk.CreateSandboxRequest{
		Labels:          map[string]string{"user": user},
		AutoStopSeconds: sdk.Ptr(int(idle.Seconds())),
	})
	if err != nil {
		return err
	}
	if created {
		fmt.Printf("created %s (id %s)\n", name, sb.ID)
	} else {
		fmt.Printf("found %s (id %s), %s", name, sb.ID, sb.State)
		if sb.Reason != "" {
			fmt.Printf(" (%s)", sb.Reason)
		}
		fmt.Println()
	}

	// The user's turn. In a chat app this is where the model's tool calls
	// for this user run; here it is one scripted command. A stopped sandbox
	// is started by this call, before the command runs.
	box := c.Sandbox(name)
	res, err := box.Exec(ctx, sdk.ExecRequest{
		Shell: `[ -z "$NOTE" ] || echo "$NOTE" >> /workspace/notes.txt; touch /workspace/notes.txt; cat /workspace/notes.txt`,
		Env:   map[string]string{"NOTE": note},
	})
	if err != nil {
		return err
	}
	if res.ExitCode != 0 {
		return fmt.Errorf("the user's command exited %d: %s", res.ExitCode, res.Stderr)
	}
	now, err := box.Get(ctx)
	if err != nil {
		return err
	}
	if now.StartedAt != nil {
		fmt.Printf("instance started %s, %s\n", now.StartedAt.Format(time.RFC3339), now.State)
	}
	fmt.Printf("notes.txt:\n%s", res.Stdout)

	if waitStop {
		for now.State != sdk.StateStopped {
			time.Sleep(200 * time.Millisecond)
			if now, err = box.Get(ctx); err != nil {
				return err
			}
		}
		fmt.Printf("stopped (%s) after %s without use\n", now.Reason, idle)
	}
	return nil
}
