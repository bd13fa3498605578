package store_test

import (
	"testing"

	"github.com/sbxhq/sbx/internal/store/storetest"
)

func TestNetworkConformance(t *testing.T) {
	storetest.RunNetwork(t, func(t *testing.T) storetest.NetworkStore {
		s, _ := openTemp(t)
		return s
	})
}
