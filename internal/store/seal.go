package store

import (
	"encoding/json"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/wire"
)

// Sealer seals values at rest (internal/secret's key). A sealed value
// opens only with the same additional data.
type Sealer interface {
	Seal(plain, ad []byte) []byte
	Open(sealed, ad []byte) ([]byte, error)
}

// WithSealer seals the keys of bucket mounts in stored specs: a copy of the
// database alone reveals no credential.
func WithSealer(k Sealer) Option {
	return func(s *SQLite) { s.sealer = k }
}

// bucketKeys are one bucket mount's credentials, sealed as a whole spec's list.
type bucketKeys struct {
	AccessKeyID     string `json:"a"`
	SecretAccessKey string `json:"s"`
}

// encodeSpec is spec as stored under owner (a sandbox id or a snapshot's
// name, bound into the seal): the bucket keys moved into SealedBucketKeys.
// Without a Sealer (tests, tools) they stay in the clear.
func (s *SQLite) encodeSpec(owner string, spec Spec) (string, error) {
	if s.sealer != nil && len(spec.Buckets) > 0 {
		keys := make([]bucketKeys, len(spec.Buckets))
		spec.Buckets = append([]wire.BucketMount(nil), spec.Buckets...)
		for i, b := range spec.Buckets {
			keys[i] = bucketKeys{b.AccessKeyID, b.SecretAccessKey}
			spec.Buckets[i].AccessKeyID, spec.Buckets[i].SecretAccessKey = "", ""
		}
		plain, err := json.Marshal(keys)
		if err != nil {
			return "", errdefs.Internal(err, "seal bucket keys")
		}
		spec.SealedBucketKeys = s.sealer.Seal(plain, []byte("bucket-keys\x00"+owner))
	}
	return encodeJSON(spec)
}

// decodeSpec reads what encodeSpec stored, opening the bucket keys.
func (s *SQLite) decodeSpec(owner, text string, spec *Spec) error {
	if err := decodeJSON(text, spec); err != nil {
		return err
	}
	if spec.SealedBucketKeys == nil {
		return nil
	}
	if s.sealer == nil {
		return errdefs.Internal(nil, "the bucket keys of %s are sealed and this store has no key", owner)
	}
	plain, err := s.sealer.Open(spec.SealedBucketKeys, []byte("bucket-keys\x00"+owner))
	var keys []bucketKeys
	if err == nil {
		err = json.Unmarshal(plain, &keys)
	}
	if err != nil || len(keys) != len(spec.Buckets) {
		return errdefs.Internal(err, "the bucket keys of %s do not open with this daemon's key", owner)
	}
	for i, k := range keys {
		spec.Buckets[i].AccessKeyID, spec.Buckets[i].SecretAccessKey = k.AccessKeyID, k.SecretAccessKey
	}
	spec.SealedBucketKeys = nil
	return nil
}
