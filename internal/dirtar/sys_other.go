//go:build !unix

package dirtar

import "io/fs"

const readFlags = 0

func sameDevice(a, b fs.FileInfo) bool { return true }
