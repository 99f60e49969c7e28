package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/comptoir-pos/comptoir/backend/site"
)

// hubArchive names a monthly archive kept at head office.
type hubArchive struct{ hub, restaurant, kiosk, period string }

// check refuses what does not go with --hub: a check at head office is
// against the key the restaurant gave at installation, never the one the
// archive carries (which head office cannot tell from a forged one).
func (a hubArchive) check(files, expects, keyLen int) error {
	u, err := url.Parse(a.hub)
	switch {
	case a.hub == "":
		return errors.New("--restaurant, --kiosk and --period go with --hub")
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		return fmt.Errorf("--hub %q: head office's page, http://host:port", a.hub)
	case !site.ValidToken(a.restaurant) || !site.ValidToken(a.kiosk):
		return errors.New("--hub needs --restaurant and --kiosk (as head office's page lists them)")
	case !site.ValidPeriod(a.period):
		return fmt.Errorf("--period %q: the month, yyyy-MM", a.period)
	case files > 0 || expects > 0:
		return errors.New("--hub checks head office's copy: no archive file, no --expect")
	case keyLen == 0:
		return errors.New("--hub needs --key: the restaurant's public key exported at installation (comptoir fiscal key)")
	}
	return nil
}

// maxHubArchive bounds what is read from head office: an archive is at
// most 256 MiB (site.MaxArchiveParts parts).
const maxHubArchive = site.MaxArchiveParts * site.ArchivePartSize

// verifyAtHub checks every version head office keeps of a kiosk's
// archive of a month (an archive made again at the restaurant is kept
// beside the first) with the key given: exit 0 when each holds.
func verifyAtHub(ctx context.Context, a hubArchive, pub []byte, stdout, stderr io.Writer) int {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	var kept []struct {
		Kiosk, Period, SHA256 string
	}
	raw, err := hubGet(ctx, a.hub+"/api/fiscal?"+url.Values{"restaurant": {a.restaurant}}.Encode(), 16<<20)
	if err == nil {
		err = json.Unmarshal(raw, &kept)
	}
	if err != nil {
		fmt.Fprintln(stderr, "comptoir verify:", err)
		return 1
	}
	code, found := 0, 0
	for _, v := range kept {
		if v.Kiosk != a.kiosk || v.Period != a.period {
			continue
		}
		found++
		q := url.Values{"restaurant": {a.restaurant}, "kiosk": {a.kiosk}, "period": {a.period}, "sha256": {v.SHA256}}
		body, err := hubGet(ctx, a.hub+"/api/fiscal/archive?"+q.Encode(), maxHubArchive)
		if err != nil {
			fmt.Fprintln(stderr, "comptoir verify:", err)
			return 1
		}
		fmt.Fprintf(stderr, "comptoir verify: head office's copy %s of %s/%s %s:\n", v.SHA256[:12], a.restaurant, a.kiosk, a.period)
		if c := reportArchive(bytes.NewReader(body), pub, a.period, stdout, stderr); c != 0 {
			code = c
		}
	}
	if found == 0 {
		fmt.Fprintf(stderr, "comptoir verify: head office keeps no archive of %s for kiosk %s of %s\n", a.period, a.kiosk, a.restaurant)
		return 1
	}
	return code
}

// hubGet reads one answer of head office's API, at most max bytes.
func hubGet(ctx context.Context, u string, max int) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("head office: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, int64(max)+1))
	switch {
	case err != nil:
		return nil, fmt.Errorf("head office: %w", err)
	case len(body) > max:
		return nil, errors.New("head office: an answer larger than it can be")
	case resp.StatusCode != http.StatusOK:
		var e struct{ Error string }
		if json.Unmarshal(body, &e) != nil || e.Error == "" {
			e.Error = resp.Status
		}
		return nil, fmt.Errorf("head office: %s", e.Error)
	}
	return body, nil
}
