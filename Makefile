# Developer shortcuts. The two commands a new user needs are scripts/start and
# scripts/test (see README); these targets wrap them and add the rest.
.PHONY: run test build dev simulator vet gotest frontend-test smoke clean

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

vet:
	go vet ./...

gotest:
	go test -race -count=1 ./...

frontend-test:
	cd frontend && npm run check && npm test

smoke: build
	scripts/desktop-smoke.sh build/bin/comptoir build/bin/desktop-smoke.png

clean:
	rm -rf build/bin frontend/dist/assets frontend/dist/index.html
