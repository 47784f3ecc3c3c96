# Reasonix build and test entry points. `make test` is what CI runs.

VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -s -w -X main.version=$(VERSION)
GO      ?= go
BIN     ?= bin
PLATFORMS := linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64

.PHONY: build test vet fmt cross run fuzz bench

## build: the static reasonix binary and the example plugin in ./bin
build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "$(LDFLAGS)" -o $(BIN)/reasonix ./cmd/reasonix
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "$(LDFLAGS)" -o $(BIN)/reasonix-plugin-example ./cmd/reasonix-plugin-example

## test: install what the tests need, then vet, race-test and briefly fuzz everything
test:
	./scripts/test.sh

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

## run: run Reasonix from source (ARGS="run 'fix the test'" for one headless task)
ARGS ?= serve
run:
	$(GO) run -ldflags "$(LDFLAGS)" ./cmd/reasonix $(ARGS)

## fuzz: long fuzz runs (FUZZTIME per target), separate from CI
FUZZTIME ?= 5m
fuzz:
	FUZZTIME=$(FUZZTIME) ./scripts/fuzz.sh

## bench: the benchmarks quoted in the issue notes
bench:
	$(GO) test -run '^$$' -bench . -benchmem -count 6 ./...
