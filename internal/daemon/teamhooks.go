package daemon

import (
	"context"
	"sync"

	"github.com/sbxhq/sbx/internal/api"
	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/netfloor"
	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/internal/webhook"
	"github.com/sbxhq/sbx/wire"
)

// teamHooks sends each team's events to that team's webhook (besides the
// operator's --webhook URLs, which get every team's). Only the root admin
// sets one (the API), so no tenant can point the daemon at a host address.
type teamHooks struct {
	st store.TeamStore

	mu      sync.Mutex
	senders map[string]*webhook.Sender // by team
}

func newTeamHooks(ctx context.Context, st store.TeamStore) (*teamHooks, error) {
	h := &teamHooks{st: st, senders: map[string]*webhook.Sender{}}
	hooks, err := st.ListTeamWebhooks(ctx)
	if err != nil {
		return nil, err
	}
	for _, wh := range hooks {
		s, err := newTeamSender(wh.URL, wh.Secret)
		if err != nil {
			return nil, err
		}
		h.senders[wh.Team] = s
	}
	return h, nil
}

// wrap returns onEvent that also sends the event to its team's webhook.
func (h *teamHooks) wrap(onEvent func(store.Event)) func(store.Event) {
	return func(e store.Event) {
		onEvent(e)
		h.mu.Lock()
		s := h.senders[e.Team]
		h.mu.Unlock()
		if s != nil {
			s.Send(e.Seq, api.Event(e))
		}
	}
}

// Set makes team's events go to url, signed with secret.
func (h *teamHooks) Set(ctx context.Context, team, url, secret string) error {
	if err := webhook.CheckURL(url); err != nil {
		return errdefs.Invalid(wire.CodeInvalidTeam, "%v", err)
	}
	if err := netfloor.Default().CheckURL(url); err != nil {
		return errdefs.Invalid(wire.CodeInvalidTeam, "webhook URL: %v", err)
	}
	s, err := newTeamSender(url, secret)
	if err != nil {
		return errdefs.Invalid(wire.CodeInvalidTeam, "%v", err)
	}
	if err := h.st.SetTeamWebhook(ctx, store.TeamWebhook{Team: team, URL: url, Secret: secret}); err != nil {
		s.Close()
		return err
	}
	h.swap(team, s)
	return nil
}

// newTeamSender sends to a team's webhook: a tenant chose the URL, so
// nothing below the operator's network floor is dialled (checked on the
// address each connection is made to) and no redirect is followed.
func newTeamSender(url, secret string) (*webhook.Sender, error) {
	return webhook.New(webhook.Config{URLs: []string{url}, Secret: secret, Client: netfloor.Default().Client(0)})
}

// Delete stops sending team's events.
func (h *teamHooks) Delete(ctx context.Context, team string) error {
	if err := h.st.DeleteTeamWebhook(ctx, team); err != nil {
		return err
	}
	h.swap(team, nil)
	return nil
}

func (h *teamHooks) swap(team string, s *webhook.Sender) {
	h.mu.Lock()
	old := h.senders[team]
	if s == nil {
		delete(h.senders, team)
	} else {
		h.senders[team] = s
	}
	h.mu.Unlock()
	if old != nil {
		go old.Close() // delivers or drops what it holds without blocking the caller
	}
}

// Close stops every team's sender.
func (h *teamHooks) Close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, s := range h.senders {
		s.Close()
	}
}
