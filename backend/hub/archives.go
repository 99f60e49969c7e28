package hub

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/comptoir-pos/comptoir/backend/site"
)

// assembly is an archive whose parts are arriving, in order.
type assembly struct {
	period, sum string
	n, next     int
	buf         bytes.Buffer
}

// archiveObject is where head office keeps a kiosk's archive of a month:
// each version apart (by its SHA-256), so that an archive made again at
// the restaurant, altered or not, never replaces the copy kept first.
func archiveObject(r, kiosk, period, sum string) string {
	return fmt.Sprintf("%s/%s/archives/%s/%s", r, kiosk, period, sum)
}

// archivePart adds one part of a kiosk's archive; the last one puts the
// archive, once its SHA-256 is the one announced, in the object store.
// Parts come in the site's order; a part out of sequence drops what was
// gathered (the next copy of the archive starts again at its part 0).
// Called with l.mu held.
func (l *Ledger) archivePart(r, k string, p archivePart, data []byte) {
	period, sum, i, n := p.period, p.sum, p.i, p.n
	key := r + "/" + k
	a := l.assembling[key]
	if i == 0 {
		a = &assembly{period: period, sum: sum, n: n}
		l.assembling[key] = a
	}
	if a == nil || a.sum != sum || a.n != n || a.next != i {
		l.log.Warn("hub: an archive part out of sequence: the archive waits for its next copy", "restaurant", r, "kiosk", k, "part", i)
		delete(l.assembling, key)
		return
	}
	a.buf.Write(data)
	if a.next++; a.next < a.n {
		return
	}
	delete(l.assembling, key)
	got := sha256.Sum256(a.buf.Bytes())
	if hex.EncodeToString(got[:]) != a.sum {
		l.log.Error("hub: an archive arrived altered: not kept", "restaurant", r, "kiosk", k, "period", a.period)
		return
	}
	l.keepArchive(archiveObject(r, k, a.period, a.sum), a.buf.Bytes())
}

// keepArchive puts an archive in the object store unless it is there
// already (head office folds its stream again at each start).
func (l *Ledger) keepArchive(name string, data []byte) {
	if l.fiscal == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := l.fiscal.GetInfo(ctx, name); err == nil {
		return
	}
	if _, err := l.fiscal.PutBytes(ctx, name, data); err != nil {
		l.log.Error("hub: an archive not kept", "name", name, "err", err)
	}
}

// ErrNoArchive: head office holds no such archive.
var ErrNoArchive = errors.New("hub: no such archive at head office")

// Archive reads back a version (its SHA-256, hex) of a restaurant's
// kiosk's archive of a month (yyyy-MM), as the kiosk wrote it.
func (l *Ledger) Archive(ctx context.Context, r, kiosk, period, sum string) ([]byte, error) {
	if !site.ValidToken(r) || !site.ValidToken(kiosk) || !site.ValidPeriod(period) || !validSum(sum) {
		return nil, fmt.Errorf("hub: an archive is named by restaurant, kiosk (tokens), month (yyyy-MM) and SHA-256 (hex)")
	}
	data, err := l.fiscal.GetBytes(ctx, archiveObject(r, kiosk, period, sum))
	if errors.Is(err, jetstream.ErrObjectNotFound) {
		return nil, ErrNoArchive
	}
	return data, err
}

func validSum(s string) bool {
	raw, err := hex.DecodeString(s)
	return err == nil && len(raw) == sha256.Size && s == hex.EncodeToString(raw)
}

// ArchiveInfo is one version of an archive kept at head office.
type ArchiveInfo struct {
	Restaurant string    `json:"restaurant"`
	Kiosk      string    `json:"kiosk"`
	Period     string    `json:"period"`
	SHA256     string    `json:"sha256"`
	Size       uint64    `json:"size"`
	Kept       time.Time `json:"kept"`
}

// Archives lists the archives kept, of one restaurant ("": all).
func (l *Ledger) Archives(ctx context.Context, r string) ([]ArchiveInfo, error) {
	out := []ArchiveInfo{}
	infos, err := l.fiscal.List(ctx)
	if errors.Is(err, jetstream.ErrNoObjectsFound) {
		return out, nil
	}
	if err != nil {
		return nil, err
	}
	for _, info := range infos {
		parts := strings.Split(info.Name, "/")
		if len(parts) != 5 || parts[2] != "archives" || (r != "" && parts[0] != r) {
			continue
		}
		out = append(out, ArchiveInfo{Restaurant: parts[0], Kiosk: parts[1], Period: parts[3], SHA256: parts[4],
			Size: info.Size, Kept: info.ModTime})
	}
	// By restaurant, kiosk and month; the versions in the order kept.
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if ka, kb := a.Restaurant+"/"+a.Kiosk+"/"+a.Period, b.Restaurant+"/"+b.Kiosk+"/"+b.Period; ka != kb {
			return ka < kb
		}
		return a.Kept.Before(b.Kept)
	})
	return out, nil
}
