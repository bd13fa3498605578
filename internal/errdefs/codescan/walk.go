package codescan

import (
	"io/fs"
	"path/filepath"
	"strings"
)

func walk(root string, fn func(path string)) error {
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p != root && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) {
			return filepath.SkipDir
		}
		if !d.IsDir() {
			fn(p)
		}
		return nil
	})
}
