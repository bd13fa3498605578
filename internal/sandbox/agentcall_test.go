package sandbox

import (
	"context"
	"github.com/sbxhq/sbx/internal/auth"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/sbxhq/sbx/internal/agentapi"
	"github.com/sbxhq/sbx/internal/runtime"
	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/wire"
)

// A frozen agent accepts connections (the kernel queues them) and never
// answers. A graceful stop must still end: it gives up on the agent after
// the agent call timeout and kills the instance through the runtime.
func TestGracefulStopOfASilentAgentEnds(t *testing.T) {
	m, rt, st := newFakeManager(t)
	m.cfg.AgentCallTimeout = 100 * time.Millisecond
	sb := startWithSilentAgent(t, m, rt, st)
	done := make(chan error, 1)
	go func() {
		_, err := m.Stop(auth.System(context.Background(), "test"), sb.ID, StopOptions{Grace: time.Hour})
		done <- err
	}()
	if err := waitDone(t, done, "a graceful stop waits on an agent that does not answer"); err != nil {
		t.Fatal(err)
	}
	assertStopped(t, rt, st, sb.ID)
}

// A force stop does not wait behind a graceful stop: it cuts it short.
func TestForceStopCutsAGracefulStopShort(t *testing.T) {
	for _, how := range []string{"force stop", "delete"} {
		t.Run(how, func(t *testing.T) {
			m, rt, st := newFakeManager(t)
			m.cfg.AgentCallTimeout = time.Hour
			sb := startWithSilentAgent(t, m, rt, st)
			graceful := make(chan error, 1)
			go func() {
				_, err := m.Stop(auth.System(context.Background(), "test"), sb.ID, StopOptions{Grace: time.Hour})
				graceful <- err
			}()
			waitFor(t, "the graceful stop to begin", func() bool {
				m.mu.Lock()
				defer m.mu.Unlock()
				return m.graceful[sb.ID] != nil
			})
			forced := make(chan error, 1)
			go func() {
				var err error
				if how == "delete" {
					_, err = m.Delete(auth.System(context.Background(), "test"), sb.ID, true)
				} else {
					_, err = m.Stop(auth.System(context.Background(), "test"), sb.ID, StopOptions{Force: true})
				}
				forced <- err
			}()
			if err := waitDone(t, forced, how+" waits behind a graceful stop"); err != nil {
				t.Fatal(err)
			}
			if err := waitDone(t, graceful, "the graceful stop did not end"); err != nil {
				t.Fatal(err)
			}
			if how == "force stop" {
				assertStopped(t, rt, st, sb.ID)
			} else if _, err := st.GetSandbox(auth.System(context.Background(), "test"), sb.ID); err == nil {
				t.Error("the sandbox is still there after delete")
			}
		})
	}
}

// startWithSilentAgent makes a started sandbox whose agent accepts
// connections and never answers, as a frozen one does.
func startWithSilentAgent(t *testing.T, m *Manager, rt *fakeRuntime, st store.Store) *store.Sandbox {
	t.Helper()
	return startWithAgent(t, m, rt, st, "sbx-silent", func(ln net.Listener) {
		var conns []net.Conn // accept and say nothing
		defer func() {
			for _, c := range conns {
				c.Close()
			}
		}()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns = append(conns, c)
		}
	})
}

// startWithAgent makes a started sandbox id whose instance is a process the
// fake runtime does not kill and whose agent is serve, run on the agent
// socket's listener until the test ends.
func startWithAgent(t *testing.T, m *Manager, rt *fakeRuntime, st store.Store, id string, serve func(net.Listener)) *store.Sandbox {
	t.Helper()
	sb := &store.Sandbox{ID: id, State: wire.StateStarted, Spec: store.Spec{Image: "base"}}
	if err := st.CreateSandbox(auth.System(context.Background(), "test"), sb); err != nil {
		t.Fatal(err)
	}
	rt.mu.Lock()
	rt.containers[sb.ID] = runtime.Status{ID: sb.ID, Running: true}
	rt.mu.Unlock()
	run := m.dirsOf(sb.ID).run
	if err := os.MkdirAll(run, 0o700); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("unix", filepath.Join(run, runtime.AgentSock))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go serve(ln)
	proc := exec.Command("sleep", "600")
	if err := proc.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { proc.Process.Kill(); proc.Wait() })
	if err := m.attach(sb.ID, proc.Process.Pid, agentapi.NewClient(run)); err != nil {
		t.Fatal(err)
	}
	return sb
}

func waitDone(t *testing.T, done <-chan error, failure string) error {
	t.Helper()
	select {
	case err := <-done:
		return err
	case <-time.After(30 * time.Second):
		t.Fatal(failure)
		return nil
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func assertStopped(t *testing.T, rt *fakeRuntime, st store.Store, id string) {
	t.Helper()
	got, err := st.GetSandbox(auth.System(context.Background(), "test"), id)
	if err != nil || got.State != wire.StateStopped {
		t.Errorf("after the stop: %+v, %v", got, err)
	}
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if _, running := rt.containers[id]; running {
		t.Error("the instance was not deleted through the runtime")
	}
}

// An action that waits on an agent gives its worker slot back, once.
func TestWaitingOnAgentFreesTheWorkerSlot(t *testing.T) {
	m := &Manager{}
	m.life.init()
	sem := make(chan struct{}, 1)
	sem <- struct{}{}
	slot := &workerSlot{release: func() { <-sem }}
	m.life.busy["sbx-a"] = slot
	m.waitingOnAgent("sbx-a")
	select {
	case sem <- struct{}{}: // another action can take it
	default:
		t.Fatal("waiting on an agent kept the worker slot")
	}
	m.waitingOnAgent("sbx-a")
	slot.free()
	if len(sem) != 1 {
		t.Errorf("the slot was released more than once: %d taken", len(sem))
	}
	m.waitingOnAgent("sbx-b") // no action on it: nothing to do
	m.life.busy["sbx-c"] = nil
	m.waitingOnAgent("sbx-c") // an action still waiting for a slot: nothing to do
}
