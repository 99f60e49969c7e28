package cloudsim

import (
	"html/template"
	"net/http"
)

var returnPage = template.Must(template.New("done").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Said}}</title></head>
<body style="font-family: sans-serif; max-width: 28rem; margin: 2rem auto; padding: 0 1rem">
<p>Simulated merchant page: the phone's return after a payment link.</p>
<h1 data-testid="return-status" data-status="{{.Status}}">{{.Said}}</h1>
{{if .Cart}}<p>Cart {{.Cart}}</p>{{end}}
</body></html>`))

// handleReturnPage is a page a link's return URLs may name: it says what
// the status the provider added means, and nothing else (the cart decides,
// never this page).
func (c *Cloud) handleReturnPage(w http.ResponseWriter, r *http.Request) {
	status := r.URL.Query().Get("status")
	said := map[string]string{CartOK: "Paid, thank you", CartAuthorised: "Paid, thank you", CartKO: "Payment cancelled",
		CartPending: "Payment not finished"}[status]
	if said == "" {
		said = "Back from the payment"
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_ = returnPage.Execute(w, map[string]string{"Status": status, "Said": said, "Cart": r.URL.Query().Get("cartId")})
}
