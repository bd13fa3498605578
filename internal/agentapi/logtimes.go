package agentapi

import (
	"encoding/binary"
	"io"
	"time"
)

// The main process's log is raw bytes; when each part was written is kept
// beside it, in the log's path plus LogTimesSuffix (main.log.times, rotated
// with the log to main.log.1.times). The agent appends one LogTime per
// write, before the bytes, so every byte in the log has a record at or
// before its offset. The daemon reads it for logs?since= and timestamps=.
const LogTimesSuffix = ".times"

// LogTimeSize is the size of one record: the offset and the time (Unix
// nanoseconds), both little-endian int64.
const LogTimeSize = 16

// LogTime says that the bytes of a log from Offset on were written at Time
// (until the next record's offset).
type LogTime struct {
	Offset int64
	Time   time.Time
}

// AppendLogTime writes one record.
func AppendLogTime(w io.Writer, t LogTime) error {
	var b [LogTimeSize]byte
	binary.LittleEndian.PutUint64(b[:8], uint64(t.Offset))
	binary.LittleEndian.PutUint64(b[8:], uint64(t.Time.UnixNano()))
	_, err := w.Write(b[:])
	return err
}

// DecodeLogTime reads one record from the first LogTimeSize bytes of b. The
// file is in the run directory, which the sandbox can write: readers must
// not trust records to be ordered.
func DecodeLogTime(b []byte) LogTime {
	return LogTime{
		Offset: int64(binary.LittleEndian.Uint64(b[:8])),
		Time:   time.Unix(0, int64(binary.LittleEndian.Uint64(b[8:16]))),
	}
}
