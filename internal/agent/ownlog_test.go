package agent

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// A log line that takes the log past outputLogMax rotates it to ".1", and
// the next lines go to a fresh file.
func TestLogOutputRotatesOnWrite(t *testing.T) {
	path := filepath.Join(t.TempDir(), OutputLogFile)
	fd, err := unix.Open(os.DevNull, unix.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	defer func(fds []int, max int64) { outputFDs, outputLogMax = fds, max }(outputFDs, outputLogMax)
	outputFDs, outputLogMax = []int{fd}, 500
	if err := pointOutputAt(path); err != nil {
		t.Fatal(err)
	}
	o := &logOutput{path: path}
	line := strings.Repeat("x", 99) + "\n"
	for range 7 {
		if _, err := o.Write([]byte(line)); err != nil {
			t.Fatal(err)
		}
	}
	old, _ := os.ReadFile(path + ".1")
	cur, _ := os.ReadFile(path)
	if len(old) != 500 || len(cur) != 200 {
		t.Fatalf("rotated %d bytes, current %d; want 500 and 200", len(old), len(cur))
	}
}
