package store_test

import (
	"testing"

	"github.com/sbxhq/sbx/internal/store/storetest"
)

func TestSnapshotConformance(t *testing.T) {
	storetest.RunSnapshots(t, func(t *testing.T) storetest.SnapshotStore {
		s, _ := openTemp(t)
		return s
	})
}
