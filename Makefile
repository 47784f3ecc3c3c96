# Reasonix build and test entry points. `make test` is what CI runs.

VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -s -w -X main.version=$(VERSION)
GO      ?= go
BIN     ?= bin
PLATFORMS := linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64

.PHONY: build test check vet fmt cross run fuzz bench deploy-test

## build: the static reasonix binary and the example plugin in ./bin
build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "$(LDFLAGS)" -o $(BIN)/reasonix ./cmd/reasonix
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "$(LDFLAGS)" -o $(BIN)/reasonix-plugin-example ./cmd/reasonix-plugin-example

## test: install what the tests need, then vet, race-test and briefly fuzz everything
test:
	./scripts/test.sh

## check: the edit loop: vet and the tests, cached, without the race detector
## or fuzzing; tests whose Postgres, bubblewrap or git is missing are skipped.
## CGO_ENABLED=0 as run and the end-to-end tests build, so all share one cache.
check:
	CGO_ENABLED=0 $(GO) vet ./...
	CGO_ENABLED=0 $(GO) test -vet=off ./...

vet:
	$(GO) vet ./...

fmt:
	gofmt -s -w .

## cross: static binaries for every supported OS and architecture
cross:
	@for p in $(PLATFORMS); do \
		os=$${p%/*}; arch=$${p#*/}; ext=; [ $$os = windows ] && ext=.exe; \
		echo "building $$os/$$arch"; \
		CGO_ENABLED=0 GOOS=$$os GOARCH=$$arch $(GO) build -trimpath -ldflags "$(LDFLAGS)" \
			-o $(BIN)/reasonix-$$os-$$arch$$ext ./cmd/reasonix || exit 1; \
	done

## run: build ./bin/reasonix and run it (ARGS="run 'fix the test'" for one headless task)
ARGS ?= serve
# Built without -trimpath, unlike `build`: the compiled packages are then the
# ones the end-to-end tests build too, so `make run` and `make test` share them.
run:
	@echo "building $(BIN)/reasonix (the first build compiles every dependency and takes a few minutes; -v names each package as it compiles)..."
	@CGO_ENABLED=0 $(GO) build -v -ldflags "$(LDFLAGS)" -o $(BIN)/reasonix ./cmd/reasonix
	$(BIN)/reasonix $(ARGS)

## fuzz: long fuzz runs (FUZZTIME per target), separate from CI
FUZZTIME ?= 5m
fuzz:
	FUZZTIME=$(FUZZTIME) FUZZINSTRUMENT=all ./scripts/fuzz.sh

## bench: the benchmarks quoted in the issue notes
bench:
	$(GO) test -run '^$$' -bench . -benchmem -count 6 ./...

## deploy-test: build the container image on a Debian base made with mmdebstrap,
## and run it and the compose stack (Postgres + 2 nodes) for real; needs root
## (installs docker.io, starts dockerd with host networking only)
deploy-test:
	./scripts/deploy-e2e.sh
