package chain

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/comptoir-pos/comptoir/backend/terminalsim"
)

// buildBinary builds the real comptoir binary into dir. Browser mode
// refuses to start without a built UI; when frontend/dist holds none, an
// overlay gives the build a one-line page: the test drives the kiosk's
// HTTP API, never its screens.
func buildBinary(dir string) (string, error) {
	bin := filepath.Join(dir, "comptoir")
	root, err := filepath.Abs("../..")
	if err != nil {
		return "", err
	}
	args := []string{"build", "-o", bin}
	index := filepath.Join(root, "frontend", "dist", "index.html")
	if _, err := os.Stat(index); err != nil {
		page := filepath.Join(dir, "index.html")
		overlay := filepath.Join(dir, "overlay.json")
		raw, _ := json.Marshal(map[string]map[string]string{"Replace": {index: page}})
		if err := os.WriteFile(page, []byte("<!doctype html><title>Comptoir</title>\n"), 0o600); err != nil {
			return "", err
		}
		if err := os.WriteFile(overlay, raw, 0o600); err != nil {
			return "", err
		}
		args = append(args, "-overlay", overlay)
	}
	build := exec.Command("go", append(args, root)...)
	if out, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build: %v\n%s", err, out)
	}
	return bin, nil
}

// syncBuffer is a process's output, read while it runs.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// proc is one comptoir process of the chain.
type proc struct {
	name string
	args []string
	cmd  *exec.Cmd
	out  *syncBuffer
	done chan struct{}
}

// start runs `comptoir args...`; the test's end stops it if it still runs
// and shows its output when the test failed.
func start(t *testing.T, name string, args ...string) *proc {
	t.Helper()
	p := &proc{name: name, args: args}
	p.run(t)
	t.Cleanup(func() {
		p.stop(t)
		if t.Failed() {
			t.Logf("--- %s's output:\n%s", p.name, tail(p.out.String(), 4000))
		}
	})
	return p
}

func (p *proc) run(t *testing.T) {
	t.Helper()
	p.out = &syncBuffer{}
	p.cmd = exec.Command(bin, p.args...)
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("%s: %v", p.name, err)
	}
	p.done = make(chan struct{})
	go func() { _ = p.cmd.Wait(); close(p.done) }()
}

// restart runs the same command again, on the same data folder.
func (p *proc) restart(t *testing.T) {
	t.Helper()
	select {
	case <-p.done:
	default:
		t.Fatalf("%s restarted while it runs", p.name)
	}
	prev := p.out.String()
	p.run(t)
	_, _ = p.out.Write([]byte(prev + "--- restarted ---\n"))
}

// killNine ends the process with SIGKILL: nothing of it runs after.
func (p *proc) killNine(t *testing.T) {
	t.Helper()
	if err := syscall.Kill(p.cmd.Process.Pid, syscall.SIGKILL); err != nil {
		t.Fatalf("kill -9 %s: %v", p.name, err)
	}
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		t.Fatalf("%s still runs 30 s after SIGKILL", p.name)
	}
	if ws, ok := p.cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("%s ended otherwise than by SIGKILL: %v", p.name, p.cmd.ProcessState)
	}
}

// stop asks the process to stop (SIGTERM) and kills it if it has not
// after 20 s.
func (p *proc) stop(t *testing.T) {
	select {
	case <-p.done:
		return
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(20 * time.Second):
		t.Errorf("%s did not stop on SIGTERM within 20 s", p.name)
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}

// comptoir runs a one-shot command, fails the test when it fails, and
// returns its standard output.
func comptoir(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command(bin, args...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("comptoir %s: %v\n%s%s", strings.Join(args, " "), err, out.String(), errOut.String())
	}
	return out.String()
}

// setAll writes settings into a data folder, as the README's commands do.
func setAll(t *testing.T, dir string, kv ...string) {
	t.Helper()
	for i := 0; i+1 < len(kv); i += 2 {
		comptoir(t, "settings", "--data-dir", dir, "set", kv[i], kv[i+1])
	}
}

// freeAddr is a loopback address with a port free now.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// writeCert writes a self-signed certificate for 127.0.0.1 and its key
// (PEM) into dir.
func writeCert(t *testing.T, dir string) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "head office"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, IsCA: true, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tpl, tpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "hub.pem"), filepath.Join(dir, "hub.key")
	writePrivate(t, certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
	writePrivate(t, keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}))
	return certFile, keyFile
}

func writePrivate(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

var client = &http.Client{Timeout: 30 * time.Second}

// getJSON reads a JSON answer; an error when the server does not answer
// 200 (a process down, still starting).
func getJSON(url string, into any) error {
	resp, err := client.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s: %s", url, resp.Status, body)
	}
	return json.Unmarshal(body, into)
}

// postJSON sends a JSON body and reads the JSON answer.
func postJSON(url string, body, into any) error {
	raw, _ := json.Marshal(body)
	resp, err := client.Post(url, "application/json", bytes.NewReader(raw))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("POST %s: %s: %s", url, resp.Status, answer)
	}
	if into == nil {
		return nil
	}
	return json.Unmarshal(answer, into)
}

// eventually waits for cond with a generous deadline: the machine may be
// loaded, the state must come.
func eventually(t *testing.T, what string, within time.Duration, cond func() error) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		err := cond()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("still not after %v: %s: %v", within, what, err)
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// startTerminal is a simulated terminal on loopback at a hundredth of
// real time, closed when the test ends.
func startTerminal(t *testing.T) *terminalsim.Terminal {
	t.Helper()
	sim, err := terminalsim.New(terminalsim.Config{TimeScale: 0.01})
	if err != nil {
		t.Fatal(err)
	}
	if err := sim.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sim.Close() })
	return sim
}
