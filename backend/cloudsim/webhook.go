package cloudsim

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"time"
)

// Delivery is one attempt to post a transaction on the webhook.
type Delivery struct {
	TransactionID string    `json:"transactionId"`
	Attempt       int       `json:"attempt"` // 0 is the first post, then the retries
	At            time.Time `json:"at"`
	HTTPStatus    int       `json:"httpStatus,omitempty"`
	Error         string    `json:"error,omitempty"`
	OK            bool      `json:"ok"`
}

type webhookState struct {
	url         string
	deactivated bool
	deliveries  []Delivery
}

// SetWebhook sets (or, empty, removes) the company's webhook URL and
// reactivates it.
func (c *Cloud) SetWebhook(url string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.webhook.url, c.webhook.deactivated = url, false
}

// Webhook is the webhook's URL, whether it was deactivated after its
// retries, and every delivery attempt so far.
func (c *Cloud) Webhook() (url string, deactivated bool, deliveries []Delivery) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.webhook.url, c.webhook.deactivated, append([]Delivery(nil), c.webhook.deliveries...)
}

// webhookClient posts without following redirects: a redirect is a failed
// delivery.
var webhookClient = &http.Client{
	Timeout:       10 * time.Second,
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
}

// notify posts a finished transaction on the webhook, retrying on the
// specification's schedule; after the last retry fails, the webhook is
// deactivated.
func (c *Cloud) notify(t Transaction) {
	c.mu.Lock()
	url, off := c.webhook.url, c.webhook.deactivated
	c.mu.Unlock()
	if url == "" || off {
		return
	}
	body, err := json.Marshal(t)
	if err != nil {
		return
	}
	c.goLater(func() {
		for attempt := 0; ; attempt++ {
			d := c.post(url, body)
			d.TransactionID, d.Attempt = t.TransactionID, attempt
			c.mu.Lock()
			c.webhook.deliveries = append(c.webhook.deliveries, d)
			if !d.OK && attempt >= len(c.cfg.WebhookRetries) {
				c.webhook.deactivated = true
				c.log.Info("webhook deactivated after its retries", "url", url)
			}
			c.broadcastLocked()
			c.mu.Unlock()
			if d.OK || attempt >= len(c.cfg.WebhookRetries) {
				return
			}
			wait := time.NewTimer(c.scaled(c.cfg.WebhookRetries[attempt]))
			select {
			case <-wait.C:
			case <-c.ctx.Done():
				wait.Stop()
				return
			}
		}
	})
}

func (c *Cloud) post(url string, body []byte) Delivery {
	d := Delivery{At: c.cfg.Now().UTC()}
	ctx, cancel := context.WithTimeout(c.ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		d.Error = err.Error()
		return d
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := webhookClient.Do(req)
	if err != nil {
		d.Error = err.Error()
		return d
	}
	resp.Body.Close()
	d.HTTPStatus = resp.StatusCode
	d.OK = resp.StatusCode == http.StatusOK
	return d
}
