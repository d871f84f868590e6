# cronsheet: `make run` builds and starts it on the embedded SQLite store;
# `make test` runs every test.
GO       ?= go
BIN      := bin/cronsheet
CONFIG   ?= config.yaml
PKGS     := ./...

.PHONY: run build test vet fmt-check bench fuzz clean

run: build
	./$(BIN) -config $(CONFIG)

build:
	$(GO) build -o $(BIN) .

vet:
	$(GO) vet $(PKGS)

fmt-check:
	@out="$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))"; \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

test: fmt-check vet
	$(GO) test -race -count=1 -timeout 20m $(PKGS)

bench:
	$(GO) run ./cmd/cronsheet-bench

fuzz:
	$(GO) test -run='^$$' -fuzz=FuzzParse -fuzztime=60s ./mapping/schedule/

clean:
	rm -rf bin data
