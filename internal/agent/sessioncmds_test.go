package agent

import (
	"net/http"
	"testing"

	"github.com/sbxhq/sbx/wire"
)

// Recorded commands: a foreground one answers its logs; a background one
// reads the input sent to it (echoed when asked) and its record says how
// it ended; input to an ended or foreground command is refused.
func TestSessionCommandsRecorded(t *testing.T) {
	t.Parallel()
	a := startAgent(t)
	a.call("POST", "/sessions", wire.CreateSessionRequest{ID: "rec", Shell: "/bin/sh"}, http.StatusCreated, nil)
	var fg wire.SessionCommand
	a.call("POST", "/sessions/rec/commands", wire.SessionRunRequest{Command: "cd /tmp; echo out; echo err >&2; cat; (exit 3)"}, http.StatusOK, &fg)
	if fg.ExitCode == nil || *fg.ExitCode != 3 || fg.Logs == nil || fg.Logs.Stdout != "out\n" || fg.Logs.Stderr != "err\n" {
		t.Fatalf("foreground command: %+v %+v", fg, fg.Logs)
	}
	var bg wire.SessionCommand
	a.call("POST", "/sessions/rec/commands", wire.SessionRunRequest{Command: `read x; echo "got $x in $PWD"`, Async: true, Echo: true}, http.StatusAccepted, &bg)
	if bg.ExitCode != nil || bg.ID == fg.ID {
		t.Fatalf("background command: %+v", bg)
	}
	a.call("POST", "/sessions/rec/commands/"+bg.ID+"/input", wire.SessionInput{Data: "hi\n"}, http.StatusNoContent, nil)
	var got wire.SessionCommand
	poll(t, "the background command to end", func() bool {
		a.call("GET", "/sessions/rec/commands/"+bg.ID, nil, http.StatusOK, &got)
		return got.ExitCode != nil
	})
	var logs wire.SessionLogs
	a.call("GET", "/sessions/rec/commands/"+bg.ID+"/logs", nil, http.StatusOK, &logs)
	if *got.ExitCode != 0 || logs.Stdout != "hi\ngot hi in /tmp\n" {
		t.Fatalf("background command: %+v, logs %+v", got, logs)
	}
	a.callErr("POST", "/sessions/rec/commands/"+bg.ID+"/input", wire.SessionInput{Data: "x"}, http.StatusConflict, wire.CodeProcessExited)
	a.callErr("POST", "/sessions/rec/commands/"+fg.ID+"/input", wire.SessionInput{Data: "x"}, http.StatusConflict, wire.CodeProcessExited)
	a.callErr("GET", "/sessions/rec/commands/cmd-99", nil, http.StatusNotFound, wire.CodeCommandNotFound)
	var list []wire.SessionCommand
	a.call("GET", "/sessions/rec/commands", nil, http.StatusOK, &list)
	if len(list) != 2 || list[0].ID != fg.ID || list[1].ID != bg.ID {
		t.Fatalf("list: %+v", list)
	}
}
