package auth

import (
	"encoding/json"
	"errors"
)

// HeaderPrincipal carries the principal the cluster gateway admitted a
// request as, to the host it forwards the request to, so the host runs it
// under the caller's own key id, team and scopes (its scope checks, team
// scoping and audit log are the caller's) instead of under a key the
// gateway shares with the hosts. A host believes it only on a connection
// whose verified client certificate is the gateway's (internal/api
// forwarded.go); the gateway drops any a caller sends.
const HeaderPrincipal = "Sbx-Principal"

// forwarded is HeaderPrincipal's JSON.
type forwarded struct {
	KeyID  string  `json:"keyId"`
	Team   string  `json:"team"`
	Scopes []Scope `json:"scopes"`
}

// Header is p as HeaderPrincipal's value.
func (p Principal) Header() string {
	b, _ := json.Marshal(forwarded{KeyID: p.KeyID, Team: p.Team, Scopes: p.Scopes}) // plain fields: cannot fail
	return string(b)
}

// PrincipalFromHeader reads a HeaderPrincipal value.
func PrincipalFromHeader(v string) (Principal, error) {
	var f forwarded
	if err := json.Unmarshal([]byte(v), &f); err != nil {
		return Principal{}, err
	}
	if f.KeyID == "" || f.Team == "" {
		return Principal{}, errors.New("a forwarded principal names its key id and team")
	}
	return Principal{KeyID: f.KeyID, Team: f.Team, Scopes: f.Scopes}, nil
}
