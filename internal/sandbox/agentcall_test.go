package sandbox

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/sbxhq/sbx/internal/agent"
	"github.com/sbxhq/sbx/internal/runtime"
	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/sdk"
)

// A frozen agent accepts connections (the kernel queues them) and never
// answers. A graceful stop must still end: it gives up on the agent after
// the agent call timeout and kills the instance through the runtime.
func TestGracefulStopOfASilentAgentEnds(t *testing.T) {
	m, rt, st := newFakeManager(t)
	m.cfg.AgentCallTimeout = 100 * time.Millisecond
	ctx := context.Background()
	sb := &store.Sandbox{ID: "sbx-silent", State: sdk.StateStarted, Spec: store.Spec{Image: "base"}}
	if err := st.CreateSandbox(ctx, sb); err != nil {
		t.Fatal(err)
	}
	rt.containers[sb.ID] = runtime.Status{ID: sb.ID, Running: true}
	run := m.dirsOf(sb.ID).run
	if err := os.MkdirAll(run, 0o700); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("unix", filepath.Join(run, runtime.AgentSock))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() { // accept and say nothing
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	// The instance's process: a child that outlives the stop unless killed.
	proc := exec.Command("sleep", "600")
	if err := proc.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { proc.Process.Kill(); proc.Wait() }()
	if err := m.attach(sb.ID, proc.Process.Pid, agent.NewClient(run)); err != nil {
		t.Fatal(err)
	}

	done := make(chan error, 1)
	go func() {
		_, err := m.Stop(ctx, sb.ID, StopOptions{Grace: time.Hour})
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("a graceful stop waits on an agent that does not answer")
	}
	got, err := st.GetSandbox(ctx, sb.ID)
	if err != nil || got.State != sdk.StateStopped {
		t.Errorf("after the stop: %+v, %v", got, err)
	}
	if _, running := rt.containers[sb.ID]; running {
		t.Error("the instance was not deleted through the runtime")
	}
}

// An action that waits on an agent gives its worker slot back, once.
func TestWaitingOnAgentFreesTheWorkerSlot(t *testing.T) {
	sem := make(chan struct{}, 1)
	sem <- struct{}{}
	ctx, slot := withWorkerSlot(context.Background(), func() { <-sem })
	waitingOnAgent(ctx)
	select {
	case sem <- struct{}{}: // another action can take it
	default:
		t.Fatal("waiting on an agent kept the worker slot")
	}
	waitingOnAgent(ctx)
	slot.free()
	if len(sem) != 1 {
		t.Errorf("the slot was released more than once: %d taken", len(sem))
	}
	waitingOnAgent(context.Background()) // no slot: nothing to do
}
