// Package release checks scripts/dist's refusals: a release is never built
// without a version, and what it builds goes through
// scripts/check-release.sh. The script runs in a copy of scripts/ with a
// PATH that holds Go but neither Node nor a package manager nor Wails, so
// that a step past the one under test fails at once instead of building.
package release

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// tools are what the script needs up to its version step (and the checks).
var tools = []string{"bash", "git", "sed", "date", "dirname", "cat", "id", "grep", "head", "sort", "printf", "pwd",
	"mkdir", "rm", "ls", "stat", "tr", "find", "xargs", "sha256sum", "env", "uname", "mktemp", "timeout", "cut", "basename", "go"}

// sandbox copies scripts/ and wails.json to a new folder (no .git) and
// returns it with a bin folder of the tools, plus extra ones.
func sandbox(t *testing.T, extra ...string) (root, bin string) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("scripts/dist builds the Linux and Windows packages on Linux")
	}
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	root, bin = filepath.Join(t.TempDir(), "src"), t.TempDir()
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"scripts", "wails.json"} {
		if out, err := exec.Command("cp", "-r", filepath.Join(repo, name), filepath.Join(root, name)).CombinedOutput(); err != nil {
			t.Fatalf("copy %s: %v %s", name, err, out)
		}
	}
	for _, tool := range append(tools, extra...) {
		p, err := exec.LookPath(tool)
		if err != nil {
			t.Skipf("%s is not installed", tool)
		}
		if err := os.Symlink(p, filepath.Join(bin, tool)); err != nil {
			t.Fatal(err)
		}
	}
	return root, bin
}

// dist runs scripts/dist args in root with PATH=bin and env.
func dist(t *testing.T, root, bin string, env []string, args ...string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(root, "scripts", "dist"), args...)
	cmd.Dir = root
	gocache, err := exec.Command("go", "env", "GOCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Env = append([]string{"PATH=" + bin, "HOME=" + t.TempDir(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CEILING_DIRECTORIES=" + filepath.Dir(root),
		"GOCACHE=" + strings.TrimSpace(string(gocache)), "GOFLAGS=", "GOTOOLCHAIN=local"}, env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("scripts/dist %v ran on: %s", args, out.String())
	}
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, out.String()
}

// Without .git and without COMPTOIR_VERSION, or with "dev", the release
// is refused before anything is set up; a version given, or a tagged
// clone, is stamped.
func TestAReleaseNeedsAVersion(t *testing.T) {
	root, bin := sandbox(t)
	code, out := dist(t, root, bin, nil)
	if code == 0 || !strings.Contains(out, "no version for this release") || !strings.Contains(out, "COMPTOIR_VERSION") {
		t.Fatalf("no .git, no version: exit %d\n%s", code, out)
	}
	for _, bad := range []string{"dev", "banana", "1.2"} {
		code, out := dist(t, root, bin, []string{"COMPTOIR_VERSION=" + bad})
		if code == 0 || !strings.Contains(out, "COMPTOIR_VERSION='"+bad+"'") {
			t.Fatalf("COMPTOIR_VERSION=%s: exit %d\n%s", bad, code, out)
		}
	}
	// A version given: stamped, then the setup (no Node here) stops it.
	code, out = dist(t, root, bin, []string{"COMPTOIR_VERSION=v1.2.0-rc1", "COMPTOIR_COMMIT=abc1234"})
	if code == 0 || !strings.Contains(out, "version v1.2.0-rc1, package version 1.2.0~rc1, commit abc1234") {
		t.Fatalf("COMPTOIR_VERSION=v1.2.0-rc1: exit %d\n%s", code, out)
	}
	// A tagged clone: git describe.
	git := func(args ...string) {
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.test"}, args...)...)
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	git("init", "-q")
	git("add", ".")
	git("commit", "-q", "-m", "release")
	git("tag", "v0.5.0")
	code, out = dist(t, root, bin, nil)
	if code == 0 || !strings.Contains(out, "version v0.5.0, package version 0.5.0,") {
		t.Fatalf("a tagged clone: exit %d\n%s", code, out)
	}
}

// scripts/dist --check runs scripts/check-release.sh on the binaries in
// dist/: one that is no release build (here a plain go build, unstamped)
// fails the check.
func TestDistChecksTheReleaseBuild(t *testing.T) {
	root, bin := sandbox(t)
	dir := filepath.Join(root, "dist")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	src := t.TempDir()
	if err := os.WriteFile(filepath.Join(src, "main.go"), []byte("package main\n\nfunc main() { println(\"comptoir dev\") }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "go.mod"), []byte("module example.test/fake\n\ngo 1.22\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	build := exec.Command("go", "build", "-o", filepath.Join(dir, "comptoir-v1.2.3-linux-amd64"), ".")
	build.Dir = src
	build.Env = append(os.Environ(), "GOFLAGS=", "GOWORK=off")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v %s", err, out)
	}
	if err := os.WriteFile(filepath.Join(dir, "VERSION"), []byte("version=v1.2.3\ncommit=abc\nbuildTime=now\npackageVersion=1.2.3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// check-release.sh reads its markers from the frontend's sources.
	repo, _ := filepath.Abs("../..")
	if out, err := exec.Command("cp", "-r", filepath.Join(repo, "frontend", "src"), filepath.Join(root, "frontend-src")).CombinedOutput(); err != nil {
		t.Fatalf("copy: %v %s", err, out)
	}
	if err := os.MkdirAll(filepath.Join(root, "frontend"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(root, "frontend-src"), filepath.Join(root, "frontend", "src")); err != nil {
		t.Fatal(err)
	}
	code, out := dist(t, root, bin, nil, "--check")
	if code == 0 || !strings.Contains(out, "check-release: FAIL") || !strings.Contains(out, "scripts/check-release.sh: not release builds") {
		t.Fatalf("dist --check on a binary that is no release build: exit %d\n%s", code, out)
	}
}
