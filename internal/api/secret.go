package api

import (
	"context"
	"net/http"
	"strings"

	"github.com/sbxhq/sbx/internal/agentapi"
	"github.com/sbxhq/sbx/internal/auth"
	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/httpegress"
	"github.com/sbxhq/sbx/internal/httpjson"
	"github.com/sbxhq/sbx/internal/secret"
	"github.com/sbxhq/sbx/wire"
)

// EgressHTTP is the HTTP egress proxy's side of the API: the teams'
// secrets and the sandboxes' request logs.
type EgressHTTP struct {
	Secrets *secret.Keeper
	Log     *httpegress.Log
}

// SetEgressHTTP enables the secret and egress log routes. Call it before
// serving.
func (s *Server) SetEgressHTTP(e EgressHTTP) { s.egressHTTP = &e }

// errNoEgressProxy answers the secret and egress log routes of a daemon
// without the proxy.
func errNoEgressProxy() error {
	return errdefs.Unavailable(wire.CodeNetworkUnavailable, "this daemon runs without the HTTP egress proxy (no networking)")
}

func (s *Server) keeper() (*secret.Keeper, error) {
	if s.egressHTTP == nil || s.egressHTTP.Secrets == nil {
		return nil, errNoEgressProxy()
	}
	return s.egressHTTP.Secrets, nil
}

func (s *Server) createSecret(w http.ResponseWriter, r *http.Request) error {
	k, err := s.keeper()
	if err != nil {
		return err
	}
	var req wire.CreateSecretRequest
	if err := decodeJSON(w, r, &req); err != nil {
		return err
	}
	info, err := k.Create(r.Context(), req)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, info)
	return nil
}

func (s *Server) setSecretHosts(w http.ResponseWriter, r *http.Request) error {
	k, err := s.keeper()
	if err != nil {
		return err
	}
	var req wire.SecretHosts
	if err := decodeJSON(w, r, &req); err != nil {
		return err
	}
	info, err := k.SetHosts(r.Context(), r.PathValue("name"), req)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, info)
	return nil
}

func (s *Server) listSecrets(w http.ResponseWriter, r *http.Request) error {
	k, err := s.keeper()
	if err != nil {
		return err
	}
	out, err := k.List(r.Context())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (s *Server) deleteSecret(w http.ResponseWriter, r *http.Request) error {
	k, err := s.keeper()
	if err != nil {
		return err
	}
	if err := k.Delete(r.Context(), r.PathValue("name")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// checkSecrets makes sure every secret the http rules of p name exists in
// team and may be sent to the rule's host: a rule naming a missing secret,
// or one that would send it elsewhere, is a 400, not a leak or a broken
// request later.
func (s *Server) checkSecrets(ctx context.Context, team string, p *wire.EgressPolicy) error {
	if p == nil || p.HTTP == nil || len(httpegress.SecretNames(p.HTTP)) == 0 {
		return nil
	}
	k, err := s.keeper()
	if err != nil {
		return err
	}
	rules, err := httpegress.ParseRules(p.HTTP) // hosts as the proxy matches them
	if err != nil {
		return err
	}
	for i, rule := range rules.Rules {
		for _, in := range rule.Inject {
			sec, err := k.Hosts(ctx, team, in.Secret)
			if errdefs.Is(err, errdefs.KindNotFound) {
				return errdefs.Invalid(wire.CodeUnknownSecret, "an inject rule names secret %q, which team %s does not have; create it with `sbx secret create %s --host HOST`", in.Secret, team, in.Secret)
			} else if err != nil {
				return err
			}
			if !httpegress.SecretCoversRule(sec, rule.Host) {
				return errdefs.Invalid(wire.CodeInvalidHTTPRule, "http rule %d: secret %q may not be sent to host %q (%s); add the host with `sbx secret hosts %s --host HOST`",
					i, in.Secret, rule.Host, secretHostsText(sec), in.Secret)
			}
		}
	}
	return nil
}

// secretHostsText names where a secret may go, for an error.
func secretHostsText(sec httpegress.SecretValue) string {
	if len(sec.Hosts) == 0 {
		return "it has no hosts yet"
	}
	return "its hosts: " + strings.Join(sec.Hosts, ", ")
}

// checkCreateSecrets is checkSecrets for a new sandbox of the caller's team.
func (s *Server) checkCreateSecrets(ctx context.Context, p *wire.EgressPolicy) error {
	return s.checkSecrets(ctx, auth.TeamOf(ctx), p)
}

// egressLog answers a sandbox's HTTP egress log, or with follow=true
// streams it as NDJSON: the kept entries, then each new one.
func (s *Server) egressLog(w http.ResponseWriter, r *http.Request) error {
	if s.egressHTTP == nil || s.egressHTTP.Log == nil {
		return errNoEgressProxy()
	}
	follow, err := httpjson.BoolParam(r, "follow")
	if err != nil {
		return err
	}
	sb, err := s.sandboxes.Get(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	log := s.egressHTTP.Log
	if !follow {
		writeJSON(w, http.StatusOK, log.Recent(sb.ID))
		return nil
	}
	recent, next, stop := log.Follow(sb.ID)
	defer stop()
	ns := agentapi.NewWriter(w)
	for _, e := range recent {
		if !ns.Send(e) {
			return nil
		}
	}
	for {
		select {
		case e := <-next:
			if !ns.Send(e) {
				return nil
			}
		case <-r.Context().Done():
			return nil
		case <-s.sandboxes.Closed():
			return nil
		}
	}
}
