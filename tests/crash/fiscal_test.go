package crash

import (
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/comptoir-pos/comptoir/backend/terminalsim"
)

// SIGKILL during closings and archives: whatever the moment, nothing is
// half-written (a closing is in the journal whole or not at all, an
// archive file is whole or absent), and the chains verify.
func TestKillNineDuringClosingsAndArchives(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and kills the real binary")
	}
	bin := buildBinary(t)
	sim, err := terminalsim.New(terminalsim.Config{TimeScale: 0.001, NoTestAmounts: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := sim.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sim.Close() })
	data := filepath.Join(t.TempDir(), "data")
	usb := filepath.Join(t.TempDir(), "usb")
	run := func(args ...string) *exec.Cmd {
		return exec.Command(bin, append([]string{args[0], "--data-dir", data}, args[1:]...)...)
	}
	for _, order := range []string{"K1", "K2", "K3"} {
		if out, err := run("pay", "--terminal", sim.URL(), "--amount", "990", "--order", order).CombinedOutput(); err != nil {
			t.Fatalf("pay: %v\n%s", err, out)
		}
	}
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 3))
	day := time.Date(2026, 1, 1, 0, 0, 0, 0, time.Local)
	month := time.Now().Format("2006-01")
	for i := range 16 {
		cmd := run("close", "--day", day.AddDate(0, 0, i).Format(time.DateOnly))
		if i%2 == 1 {
			cmd = run("archive", "--period", month, "--out", usb)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(time.Duration(rng.IntN(60)) * time.Millisecond):
			cmd.Process.Signal(syscall.SIGKILL)
			<-done
		}
	}
	for _, args := range [][]string{{"archive", "--period", month, "--out", usb}, {"verify"}} {
		if out, err := run(args...).CombinedOutput(); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
	}
	entries, err := os.ReadDir(usb)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".tmp-") {
			t.Errorf("a half-written file is left: %s", e.Name())
		}
	}
	// The archive on the disk verifies on its own.
	archives, _ := filepath.Glob(filepath.Join(usb, "comptoir-fiscal-*.jsonl"))
	if len(archives) != 1 {
		t.Fatalf("archives %v", archives)
	}
	if out, err := run("verify", archives[0]).CombinedOutput(); err != nil {
		t.Fatalf("verify the archive: %v\n%s", err, out)
	}
}
