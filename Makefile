# Developer shortcuts. The two commands a new user needs are scripts/start and
# scripts/test (see README); these targets wrap them and add the rest.
.PHONY: run test build dev simulator contract archdoc vet lint gotest frontend-test smoke crashtest fuzz bench mutation clean

run:
	scripts/start

test:
	scripts/test

build:
	bash -c 'source scripts/lib.sh && ensure_wails && ensure_npm_packages && build_desktop'

# Live reload of the frontend and the Go code (-m: go mod tidy fails on a
# test-only dependency of modernc.org/sqlite, so it is skipped).
dev:
	wails dev -m -tags webkit2_41

# The simulated terminal alone, on the Local API's port, advertised by mDNS.
simulator:
	go run . simulator --addr 127.0.0.1:16125 --mdns

# The UI contract's TypeScript (frontend/src/lib/*.gen.ts), generated from
# the Go types; scripts/test fails when it is not current.
contract:
	cd scripts/contractgen && go run .

# docs/architecture.md's package graph and its list of the files that name a
# payment channel, from the code; go test ./scripts/archgen fails when stale.
archdoc:
	go run ./scripts/archgen

vet:
	go vet ./...

# staticcheck at the pinned version (scripts/lib.sh), as scripts/test runs it.
lint:
	bash -c 'source scripts/lib.sh && go run "honnef.co/go/tools/cmd/staticcheck@$$STATICCHECK_VERSION" ./...' 

gotest:
	go test -race -count=1 ./...

frontend-test:
	cd frontend && npm run check && npm test

smoke: build
	scripts/desktop-smoke.sh build/bin/comptoir build/bin/desktop-smoke.png

# The kill -9 crash test at full length: 200 SIGKILLs of the real binary in
# the middle of payments (scripts/test runs a short version).
crashtest:
	CRASHTEST_KILLS=200 go test -count=1 -timeout 30m -v -run KillNine ./tests/crash/

# Each fuzz target for FUZZTIME (default 1m).
FUZZTIME ?= 1m
fuzz:
	go test -run '^$$' -fuzz FuzzPaymentResponse -fuzztime $(FUZZTIME) ./backend/localapi/
	go test -run '^$$' -fuzz FuzzClassify -fuzztime $(FUZZTIME) ./backend/localapi/
	go test -run '^$$' -fuzz FuzzRequestBody -fuzztime $(FUZZTIME) ./backend/journal/
	go test -run '^$$' -fuzz FuzzDecode -fuzztime $(FUZZTIME) ./backend/escpos/

# Benchmarks and a soak run (scripts/bench/run.sh; method and numbers in
# docs/benchmarks.md, which it regenerates with docs/bench-soak-memory.png):
# per-payment overhead in browser mode, the journal's fsync and recovery
# scan, start-up (Chromium; desktop under Xvfb beside an empty Wails app),
# memory, discovery, sizes, 10,000 payments with journal vs ledger check,
# and the go test -bench means. About 10 minutes; BENCH_RESULTS=DIR keeps
# the raw samples.
bench:
	scripts/bench/run.sh

# Mutation testing of the money core (scripts/mutation, gremlins pinned
# there): journal, payment, fiscal, staff's give-back and PIN code, the
# kiosk's checkout. Rewrites the table in docs/testing.md, where the method,
# the time it takes and the survivors explained are; fails below 90 %
# efficacy. `scripts/mutation journal` runs one package.
mutation:
	scripts/mutation

clean:
	rm -rf build/bin frontend/dist/assets frontend/dist/index.html

# Release packages (scripts/dist): into dist/, the Linux binary, a .deb and an
# .rpm (nfpm), the Windows executable and its NSIS installer (cross-built;
# signed when COMPTOIR_SIGN_CERT and COMPTOIR_SIGN_PASS are set), then checks
# them. dist-check checks what is in dist/ again. dist-macos runs on a Mac
# only (CI: .github/workflows/macos.yml): a darwin/universal .app in a .dmg.
.PHONY: dist dist-check dist-macos
dist:
	scripts/dist

dist-check:
	scripts/dist --check

dist-macos:
	scripts/dist --macos
