package cloudsim

import (
	"fmt"
	"strings"
)

// ListFault makes the lists (the v4 history and the Webservices batch)
// misbehave as a faulty or hostile provider would. The zero value follows
// the specification.
type ListFault struct {
	// Extra lists this many made-up transactions more than the limit
	// asked, on every page.
	Extra int `json:"extra"`
	// Endless fills every page up to the limit with made-up transactions
	// and claims a total always beyond the page: the list never ends.
	Endless bool `json:"endless"`
	// Pad lengthens every listed transaction's issuer by this many bytes:
	// huge pages.
	Pad int `json:"pad"`
}

// ListServed is what the lists have answered since the cloud started.
type ListServed struct {
	Pages int   `json:"pages"`
	Bytes int64 `json:"bytes"` // bodies, as sent
}

// SetListFault sets how the lists misbehave (the zero value: not).
func (c *Cloud) SetListFault(f ListFault) error {
	if f.Extra < 0 || f.Pad < 0 || f.Pad > 64<<20 {
		return fmt.Errorf("cloudsim: list fault %+v: extra and pad are 0 or more, pad at most 64 MiB", f)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.faults.list = f
	return nil
}

// ListServed returns what the lists have answered: how many pages, how
// many bytes.
func (c *Cloud) ListServed() ListServed {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.faults.served
}

// apply turns a true page into the faulty one: the entries and the total
// to send.
func (f ListFault) apply(page []historyEntry, offset, limit, total int, createdAt string) ([]historyEntry, int) {
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
