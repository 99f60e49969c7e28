package cloudsim

import (
	"fmt"
	"strings"

	"github.com/comptoir-pos/comptoir/backend/terminalsim"
)

// ListFault makes the lists (the v4 history and the Webservices batch)
// misbehave as a faulty or hostile provider would: the faults the
// simulated terminal's history takes. The zero value follows the
// specification.
type ListFault = terminalsim.HistoryFault

// ListServed is what the lists have answered since the cloud started.
type ListServed = terminalsim.HistoryServed

// SetListFault sets how the lists misbehave (the zero value: not).
func (c *Cloud) SetListFault(f ListFault) error {
	if !f.Valid() {
		return fmt.Errorf("cloudsim: list fault %+v: extra and pad are 0 or more, pad at most 64 MiB", f)
	}
	c.setFault(func(fs *faults) { fs.list = f })
	return nil
}

// ListServed returns what the lists have answered: how many pages, how
// many bytes.
func (c *Cloud) ListServed() ListServed {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.faults.served
}

// applyListFault turns a true page into the faulty one: the entries and
// the total to send.
func applyListFault(f ListFault, page []historyEntry, offset, limit, total int, createdAt string) ([]historyEntry, int) {
	made := func(n int) historyEntry {
		return historyEntry{Amount: 100, CreatedAt: createdAt, CurrencyCode: "EUR", Status: StatusOK,
			TransactionID: fmt.Sprintf("FAKE-%08d", n), Type: "debit", SerialNumber: "FAKE"}
	}
	page = append([]historyEntry{}, page...)
	if f.Endless {
		for n := offset + len(page); len(page) < limit; n++ {
			page = append(page, made(n))
		}
		total = offset + len(page) + limit
	}
	for i := range f.Extra {
		page = append(page, made(1_000_000_000+offset+i))
	}
	if f.Pad > 0 {
		pad := strings.Repeat("X", f.Pad)
		for i := range page {
			page[i].Issuer += pad
		}
	}
	return page, total
}
