package site

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// A monthly fiscal archive leaves the kiosk in parts, as facts of its own
// kind on the site's stream: the forwarder takes them to head office with
// the other facts (in order, each once, kept at the site while head office
// is away), where they are put together and kept in the fiscal object
// store.
const (
	// KindArchivePart is the kind of an archive's part among a kiosk's
	// facts: comptoir.R.k.<kiosk>.fiscal.archive.part.
	KindArchivePart = "fiscal.archive.part"
	// ArchivePartSize is the most an archive's part carries (the streams
	// take facts of 256 KiB at most).
	ArchivePartSize = 128 << 10
	// MaxArchiveParts bounds an archive (256 MiB).
	MaxArchiveParts = 2048

	HeaderArchivePeriod = "Comptoir-Archive-Period" // yyyy-MM
	HeaderArchiveSHA256 = "Comptoir-Archive-Sha256" // the whole file's, hex
	HeaderArchivePart   = "Comptoir-Archive-Part"   // "i/n", i from 0
	// ArchivesShippedFile, in the data folder, remembers the archives the
	// site's stream took: {"<file>":"<sha256>"}.
	ArchivesShippedFile = "archives-shipped.json"
)

var archiveName = regexp.MustCompile(`^comptoir-fiscal-.+-[0-9]{4}-[0-9]{2}\.jsonl$`)

// ValidPeriod reports whether p is a month, yyyy-MM.
func ValidPeriod(p string) bool {
	_, err := time.Parse("2006-01", p)
	return err == nil && len(p) == 7
}

// ArchivePartOf reads an archive part's headers: the archive's period and
// SHA-256, the part's index and how many there are.
func ArchivePartOf(h nats.Header) (period, sum string, i, n int, err error) {
	period, sum = h.Get(HeaderArchivePeriod), h.Get(HeaderArchiveSHA256)
	is, ns, ok := strings.Cut(h.Get(HeaderArchivePart), "/")
	i, err1 := strconv.Atoi(is)
	n, err2 := strconv.Atoi(ns)
	if !ok || err1 != nil || err2 != nil || n < 1 || n > MaxArchiveParts || i < 0 || i >= n {
		return "", "", 0, 0, fmt.Errorf("archive part %q: not i/n", h.Get(HeaderArchivePart))
	}
	if !ValidPeriod(period) {
		return "", "", 0, 0, fmt.Errorf("archive part: period %q is not yyyy-MM", period)
	}
	if raw, err := hex.DecodeString(sum); err != nil || len(raw) != sha256.Size {
		return "", "", 0, 0, fmt.Errorf("archive part: %q is not a SHA-256", sum)
	}
	return period, sum, i, n, nil
}

// ArchivePartID is the Nats-Msg-Id of an archive's part i: the same part
// of the same file is the same message, however often it is sent.
func ArchivePartID(sum string, i int) string {
	return fmt.Sprintf("archive-%s-%d", sum[:min(32, len(sum))], i)
}

// ArchiveShipper sends the kiosk's monthly archives (the files of its
// archives folder) to the site's stream, each once: a file is sent again
// only when it changed (made again).
type ArchiveShipper struct {
	JS       jetstream.JetStream
	Subjects Subjects
	Kiosk    string
	Dir      string // the archives folder
	State    string // the file that remembers what was sent
	// AckWait bounds the wait for the stream's acknowledgement of a part;
	// 0: 10 s.
	AckWait time.Duration
	Logger  *slog.Logger
}

// Run ships at once, then every interval, until ctx ends.
func (s *ArchiveShipper) Run(ctx context.Context, every time.Duration) {
	for {
		if n, err := s.ShipAll(ctx); err != nil && ctx.Err() == nil {
			s.logger().Warn("site: a fiscal archive waits in the data folder", "err", err)
		} else if n > 0 {
			s.logger().Info("site: fiscal archives sent to the site", "count", n)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(every):
		}
	}
}

func (s *ArchiveShipper) logger() *slog.Logger {
	if s.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return s.Logger
}

// ShipAll sends every archive not sent yet and says how many went.
func (s *ArchiveShipper) ShipAll(ctx context.Context) (int, error) {
	entries, err := os.ReadDir(s.Dir)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	shipped := map[string]string{}
	if raw, err := os.ReadFile(s.State); err == nil {
		if err := json.Unmarshal(raw, &shipped); err != nil {
			return 0, fmt.Errorf("%s: %w", s.State, err)
		}
	}
	n := 0
	var errs []error
	for _, e := range entries {
		if !e.Type().IsRegular() || !archiveName.MatchString(e.Name()) {
			continue
		}
		data, err := os.ReadFile(filepath.Join(s.Dir, e.Name()))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		sum := sha256.Sum256(data)
		hexSum := hex.EncodeToString(sum[:])
		if shipped[e.Name()] == hexSum {
			continue
		}
		if err := s.ship(ctx, data, hexSum); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", e.Name(), err))
			continue
		}
		shipped[e.Name()] = hexSum
		n++
		if err := writeState(s.State, shipped); err != nil {
			return n, err
		}
	}
	return n, errors.Join(errs...)
}

// ship sends one archive's parts, each acknowledged by the stream before
// the next; a part sent twice (a ship cut short, then made again) is
// dropped by the stream as a duplicate of its id.
func (s *ArchiveShipper) ship(ctx context.Context, data []byte, sum string) error {
	period, err := archivePeriod(data)
	if err != nil {
		return err
	}
	parts := (len(data) + ArchivePartSize - 1) / ArchivePartSize
	if parts > MaxArchiveParts {
		return fmt.Errorf("an archive of %d bytes: more than %d parts", len(data), MaxArchiveParts)
	}
	for i := range parts {
		m := nats.NewMsg(s.Subjects.Fact(s.Kiosk, KindArchivePart))
		m.Data = data[i*ArchivePartSize : min(len(data), (i+1)*ArchivePartSize)]
		m.Header.Set(HeaderKiosk, s.Kiosk)
		m.Header.Set(HeaderArchivePeriod, period)
		m.Header.Set(HeaderArchiveSHA256, sum)
		m.Header.Set(HeaderArchivePart, fmt.Sprintf("%d/%d", i, parts))
		wait := s.AckWait
		if wait <= 0 {
			wait = 10 * time.Second
		}
		pctx, cancel := context.WithTimeout(ctx, wait)
		_, err := s.JS.PublishMsg(pctx, m, jetstream.WithMsgID(ArchivePartID(sum, i)), jetstream.WithExpectStream(StreamOrders))
		cancel()
		if err != nil {
			return err
		}
	}
	return nil
}

// archivePeriod reads the month an archive covers from its first line.
func archivePeriod(data []byte) (string, error) {
	first, _, _ := bytes.Cut(data, []byte("\n"))
	var h struct {
		Format string `json:"format"`
		Period string `json:"period"`
	}
	if json.Unmarshal(first, &h) != nil || !strings.HasPrefix(h.Format, "comptoir-fiscal-archive-") || !ValidPeriod(h.Period) {
		return "", errors.New("not a fiscal archive (its first line names no format and month)")
	}
	return h.Period, nil
}

func writeState(path string, shipped map[string]string) error {
	raw, _ := json.Marshal(shipped)
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, raw, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
