package crash

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/comptoir-pos/comptoir/backend/cloudsim"
	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/comptoir-pos/comptoir/backend/terminalsim"
)

// A refund by API killed with SIGKILL while its request is at the
// provider: the provider then makes it (its answer goes nowhere) or never
// receives it. `comptoir recover` settles it from the company's list, or
// asks once more when the list shows no refund: either way the provider
// made exactly one refund, and the journal holds it, approved, with the
// provider's transaction.
func TestKillNineDuringARefundByAPI(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and kills the real binary")
	}
	bin := buildBinary(t)
	for _, made := range []bool{true, false} {
		t.Run(map[bool]string{true: "made while the client was dead", false: "never received"}[made], func(t *testing.T) {
			const key, serial = "sk_crash_refund", "SN-REFUND"
			approve := terminalsim.Approve()
			cloud, err := cloudsim.New(cloudsim.Config{Key: key, Serials: []string{serial}, TimeScale: 0.01,
				Terminal: terminalsim.Config{TimeScale: 0.01, NoTestAmounts: true, Default: &approve}})
			if err != nil {
				t.Fatal(err)
			}
			if err := cloud.Start(""); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { cloud.Close() })
			data := filepath.Join(t.TempDir(), "data")
			common := []string{"--data-dir", data, "--cloud", cloud.URL(), "--serial", serial}
			run := func(args ...string) *exec.Cmd {
				cmd := exec.Command(bin, append(append([]string{args[0]}, common...), args[1:]...)...)
				cmd.Env = append(os.Environ(), "COMPTOIR_CLOUD_KEY="+key)
				return cmd
			}
			mustRun := func(args ...string) {
				t.Helper()
				if out, err := run(args...).CombinedOutput(); err != nil {
					t.Fatalf("%v: %v\n%s", args, err, out)
				}
			}
			mustRun("pay", "--order", "api-1", "--amount", "1500")
			mustRun("settings", "set", "ws.user_email", `"owner@example.com"`)
			mustRun("settings", "set", "ws.poll_every", "0.2")

			arrived, release := cloud.HoldNextRefund()
			cmd := run("refund", "--by-api", "--order", "api-1", "--amount", "1500")
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			select {
			case <-arrived:
			case <-time.After(60 * time.Second):
				cmd.Process.Kill()
				t.Fatalf("the refund never reached the provider:\n%s", stderr.String())
			}
			cmd.Process.Kill()
			cmd.Wait()
			release(made)

			mustRun("recover")
			db, err := journal.Open(context.Background(), data)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			atts, err := db.AttemptsForOrder(context.Background(), "api-1")
			if err != nil {
				t.Fatal(err)
			}
			var refunds []journal.Attempt
			for _, a := range atts {
				if a.Channel == journal.ChannelWebservices {
					refunds = append(refunds, a)
				}
			}
			made := cloud.Refunds()
			if len(refunds) != 1 || len(made) != 1 {
				t.Fatalf("%d refunds in the journal, %d at the provider", len(refunds), len(made))
			}
			if r := refunds[0]; r.State != journal.StateApproved || r.TransactionID != made[0].ID || r.Amount != made[0].Amount {
				t.Fatalf("journal %+v, provider %+v", r, made[0])
			}
		})
	}
}
