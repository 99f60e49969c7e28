package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"regexp"
	"strings"
	"testing"
	"time"
)

func TestPingDemo(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run([]string{"ping", "--demo"}, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	var res pingResult
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatalf("output is not JSON: %q", out.String())
	}
	if !res.OK || !strings.HasSuffix(res.Terminal, "/localapi/v4") {
		t.Errorf("result = %+v", res)
	}
}

func TestPingUnreachable(t *testing.T) {
	var out, errOut bytes.Buffer
	t.Setenv("COMPTOIR_TERMINAL", "")
	if code := run([]string{"ping", "--terminal", "127.0.0.1:1", "--timeout", "2s"}, &out, &errOut); code != 1 {
		t.Fatalf("exit %d, want 1", code)
	}
	var res pingResult
	if err := json.Unmarshal(out.Bytes(), &res); err != nil || res.OK || res.Kind != "transport" {
		t.Errorf("result = %+v (%v)", res, err)
	}
}

func TestPingWithoutTerminalIsAUsageError(t *testing.T) {
	t.Setenv("COMPTOIR_TERMINAL", "")
	var out, errOut bytes.Buffer
	if code := run([]string{"ping"}, &out, &errOut); code != 2 || !strings.Contains(errOut.String(), "--terminal") {
		t.Errorf("exit %d, stderr %q", code, errOut.String())
	}
}

func TestUnknownCommand(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run([]string{"frobnicate"}, &out, &errOut); code != 2 || !strings.Contains(errOut.String(), "frobnicate") {
		t.Errorf("exit %d, stderr %q", code, errOut.String())
	}
}

func TestSimulatorServesUntilCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan int, 1)
	go func() {
		done <- cmdSimulator(ctx, []string{"--addr", "127.0.0.1:0", "--timescale", "0.01"}, pw, io.Discard)
		pw.Close()
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	url := regexp.MustCompile(`http://\S+/localapi/v4`).FindString(line)
	if url == "" {
		t.Fatalf("no URL in %q", line)
	}
	go io.Copy(io.Discard, pr)
	var out, errOut bytes.Buffer
	if code := run([]string{"ping", "--terminal", url}, &out, &errOut); code != 0 {
		t.Fatalf("ping the simulator: exit %d %s %s", code, out.String(), errOut.String())
	}
	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("simulator exit %d", code)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the simulator did not stop")
	}
}

func TestSimulatorRejectsBadTimescale(t *testing.T) {
	var errOut bytes.Buffer
	if code := cmdSimulator(context.Background(), []string{"--timescale", "0"}, io.Discard, &errOut); code != 2 {
		t.Errorf("exit %d", code)
	}
}
