# cronsheet: `make run` builds and starts it on the embedded SQLite store;
# `make test` runs every test.
GO       ?= go
BIN      := bin/cronsheet
CONFIG   ?= config.yaml
PKGS     := ./...

.PHONY: run build static test vet fmt-check bench bench-jobs bench-compare fuzz clean

run: build
	./$(BIN) -config $(CONFIG)

build: static
	$(GO) build -o $(BIN) ./cmd/cronsheet

# static: Bootstrap 5.3 (the pages' design system; its bundle carries Popper
# for the dropdowns), jQuery, DataTables styled by its Bootstrap 5 packages
# (with its KeyTable, Select, AutoFill, ColReorder and FixedHeader extensions), uPlot and Swagger UI (the /api/docs page) from npm (exact versions in package-lock.json)
# copied into static/vendor/, which the Go build embeds. npm runs only when
# package.json or the lock changed.
VENDOR_FILES := node_modules/jquery/dist/jquery.min.js \
	node_modules/bootstrap/dist/css/bootstrap.min.css \
	node_modules/bootstrap/dist/js/bootstrap.bundle.min.js \
	node_modules/datatables.net/js/dataTables.min.js \
	node_modules/datatables.net-bs5/js/dataTables.bootstrap5.min.js \
	node_modules/datatables.net-bs5/css/dataTables.bootstrap5.min.css \
	node_modules/datatables.net-plugins/i18n/zh.json \
	node_modules/datatables.net-keytable/js/dataTables.keyTable.min.js \
	node_modules/datatables.net-keytable-bs5/css/keyTable.bootstrap5.min.css \
	node_modules/datatables.net-select/js/dataTables.select.min.js \
	node_modules/datatables.net-select-bs5/css/select.bootstrap5.min.css \
	node_modules/datatables.net-autofill/js/dataTables.autoFill.min.js \
	node_modules/datatables.net-autofill-bs5/css/autoFill.bootstrap5.min.css \
	node_modules/datatables.net-colreorder/js/dataTables.colReorder.min.js \
	node_modules/datatables.net-colreorder-bs5/css/colReorder.bootstrap5.min.css \
	node_modules/datatables.net-fixedheader/js/dataTables.fixedHeader.min.js \
	node_modules/datatables.net-fixedheader-bs5/css/fixedHeader.bootstrap5.min.css \
	node_modules/uplot/dist/uPlot.iife.min.js node_modules/uplot/dist/uPlot.min.css \
	node_modules/swagger-ui-dist/swagger-ui-bundle.js node_modules/swagger-ui-dist/swagger-ui.css
static: static/vendor/.stamp

static/vendor/.stamp: package.json package-lock.json
	npm ci --no-audit --no-fund --loglevel=error
	cp $(VENDOR_FILES) static/vendor/
	touch $@

vet:
	$(GO) vet $(PKGS)

fmt-check:
	@out="$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))"; \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

test: fmt-check vet static
	$(GO) test -race -count=1 -timeout 20m $(PKGS)

# The benchmark programs are commands of the nested module tools/bench
# (its own go.mod, so asynq and the benches stay out of cronsheet's build,
# vet and tests). bench: trigger lag, heap per armed task, edit-to-armed.
bench:
	cd tools/bench && $(GO) run ./cmd/cronsheet-bench

# The jobs API: accepted jobs/s, trigger lag with 10k and 100k pending
# jobs, memory per pending job (about 10 minutes).
bench-jobs:
	cd tools/bench && $(GO) run ./cmd/jobs-bench

# bench-compare: asynq v0.26.0 on a throwaway redis-server (AOF on; Debian
# package redis-server) and cronsheet (tools/bench/cmd/jobs-bench) on the
# same workloads, one table with both and their ratio, the SQLite limit
# probe (the same driver writing the least a job needs) beside them, and
# every aim of the drain with its ratio. The defaults (10,000 jobs, and
# 100,000 and 20,000 due at one instant) take 10+ minutes; a short run:
# BENCH_COMPARE_FLAGS="-n 2000 -instant '' -probe-n 5000 -spread 5".
# CRONSHEET_BENCH_MONGO_URI=mongodb://… adds the mongo driver's drain.
BENCH_COMPARE_FLAGS ?= -n 10000 -instant 100000 -probe-n 20000 -spread 20
bench-compare:
	cd tools/bench && $(GO) run ./cmd/bench-compare -repo $(CURDIR) $(BENCH_COMPARE_FLAGS)

# fuzz runs each fuzz target for FUZZTIME (default 30s), one at a time (go
# test -fuzz takes one target per run); a failing input lands in the
# package's testdata/fuzz/ and becomes a seed that plain `go test` runs.
# Plain `go test` runs every target's seeds, so CI covers the corpus.
FUZZTIME ?= 30s
FUZZ_TARGETS := ./mapping/schedule/:FuzzParse \
	./webtable/:FuzzRowJSON ./api/targetsapi/:FuzzTargetJSON ./api/flowsapi/:FuzzFlowJSON \
	./api/jobsapi/:FuzzJobJSON ./webtable/:FuzzImportCSV ./webtable/:FuzzDataTablesQuery
fuzz:
	@set -e; for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; fn=$${t#*:}; \
		echo "--- $$fn ($$pkg, $(FUZZTIME))"; \
		$(GO) test -run='^$$' -fuzz="^$$fn\$$" -fuzztime=$(FUZZTIME) $$pkg; \
	done

clean:
	rm -rf bin data node_modules static/vendor/.stamp static/vendor/*.js static/vendor/*.css static/vendor/*.json
