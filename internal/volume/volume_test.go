package volume

import (
	"testing"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/sdk"
)

func TestCheckName(t *testing.T) {
	for _, ok := range []string{"a", "data", "my-vol-1", "0x"} {
		if err := CheckName(ok); err != nil {
			t.Errorf("CheckName(%q) = %v", ok, err)
		}
	}
	for _, bad := range []string{"", "-a", "a-", "A", "a_b", "a/b", "..", "a.b", string(make([]byte, 64))} {
		if err := CheckName(bad); errdefs.CodeOf(err) != sdk.CodeInvalidVolume {
			t.Errorf("CheckName(%q) = %v, want INVALID_VOLUME", bad, err)
		}
	}
}

// Bad input changes nothing: no directory is made.
func TestCreateRefusesBadSizes(t *testing.T) {
	m := &Manager{root: t.TempDir()}
	for _, size := range []int{-1, 1, MinSizeMiB - 1, MaxSizeMiB + 1} {
		if _, err := m.Create("v", size); errdefs.CodeOf(err) != sdk.CodeInvalidVolume {
			t.Errorf("Create size %d = %v", size, err)
		}
	}
	if list, err := m.List(); err != nil || len(list) != 0 {
		t.Errorf("after refused creates: %v, %v", list, err)
	}
	if _, err := m.Get("v"); errdefs.CodeOf(err) != sdk.CodeVolumeNotFound {
		t.Errorf("Get = %v", err)
	}
	if err := m.Delete("v"); errdefs.CodeOf(err) != sdk.CodeVolumeNotFound {
		t.Errorf("Delete = %v", err)
	}
}
