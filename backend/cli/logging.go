package cli

import (
	"io"
	"log/slog"
	"path/filepath"

	"github.com/comptoir-pos/comptoir/backend/journal"
	"gopkg.in/natefinch/lumberjack.v2"
)

// kioskLogger logs as JSON to dataDir/logs/comptoir.log, rotated (10 MB,
// 5 old files, 30 days), and to stderr. Nothing logged carries card data:
// the payment code logs uuids, order ids, amounts and the terminal's
// messages, never tickets or tokens. If the log folder cannot be created the
// kiosk still runs, logging to stderr only: a log is never a reason to stop
// taking payments.
func kioskLogger(dataDir string, stderr io.Writer) (*slog.Logger, io.Closer) {
	var out io.Writer = stderr
	var closer io.Closer = io.NopCloser(nil)
	dir := filepath.Join(dataDir, "logs")
	file := filepath.Join(dir, "comptoir.log")
	// Private like the rest of the data directory: the log is made 0600
	// before the rotator opens it, and the rotator gives each new file the
	// mode of the one it replaces.
	if err := journal.PrivateDir(dir); err == nil && journal.PrivateFile(file) == nil {
		lj := &lumberjack.Logger{Filename: file, MaxSize: 10, MaxBackups: 5, MaxAge: 30}
		out, closer = everyWriter{lj, stderr}, lj
	}
	return slog.New(slog.NewJSONHandler(out, &slog.HandlerOptions{Level: slog.LevelInfo})), closer
}

// everyWriter writes to each of its writers whatever the others do: unlike
// io.MultiWriter it does not stop at the first error, so a log file on a
// full disk does not silence stderr, which is when the log matters most.
type everyWriter []io.Writer

func (ws everyWriter) Write(p []byte) (int, error) {
	var first error
	for _, w := range ws {
		if _, err := w.Write(p); err != nil && first == nil {
			first = err
		}
	}
	return len(p), first
}
