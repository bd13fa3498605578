package network

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Traffic returns the bytes a bridge sandbox has received and sent, as its
// veth's host end counts them (what the host end receives, the sandbox
// sent). ok is false when the sandbox has no veth (stopped, or network none).
func Traffic(id string) (rx, tx uint64, ok bool) {
	dir := filepath.Join("/sys/class/net", vethName(id), "statistics")
	hostRx, err1 := readCounter(filepath.Join(dir, "rx_bytes"))
	hostTx, err2 := readCounter(filepath.Join(dir, "tx_bytes"))
	if err1 != nil || err2 != nil {
		return 0, 0, false
	}
	return hostTx, hostRx, true
}

func readCounter(path string) (uint64, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	return strconv.ParseUint(strings.TrimSpace(string(data)), 10, 64)
}
