GO      ?= go
PKGS    ?= ./...
BIN     ?= bin/askbridge
# VERSION and COMMIT are stamped into the binary (askbridge version).
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo devel)
COMMIT  ?= $(shell git rev-parse HEAD 2>/dev/null)
LDFLAGS := -X main.version=$(VERSION) -X main.commit=$(COMMIT)

.PHONY: all build install run test test-short test-claude-code lint bench bench-compare fuzz deps clean image deploy-check

all: build

## build: the command as bin/askbridge (the source is cmd/bridge; the command is askbridge,
## because Debian and Ubuntu already have an unrelated bridge command, iproute2's)
build:
	$(GO) build -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/bridge

## install: askbridge into $$GOBIN, else ~/.local/bin (the same expression as the PATH line of
## README's walkthrough, ${GOBIN:-$HOME/.local/bin}); says where and whether it is on PATH
install:
	@dir="$${GOBIN:-$$HOME/.local/bin}"; \
	mkdir -p "$$dir" && $(GO) build -ldflags '$(LDFLAGS)' -o "$$dir/askbridge" ./cmd/bridge && \
	echo "installed $$dir/askbridge"; \
	case ":$$PATH:" in *":$$dir:"*) echo "$$dir is on PATH: run askbridge";; \
	*) echo "$$dir is not on PATH: run export PATH=\"$$dir:\$$PATH\" in each shell (or add it to your shell's profile), or run $$dir/askbridge";; esac

## image: the container image (deploy/Containerfile) with podman, offline: a static
## binary, the host's CA certificates and a non-root user on an empty base
IMAGE         ?= localhost/askbridge
IMAGE_CONTEXT ?= bin/image
IMAGE_TAG     ?= $(VERSION)
image:
	rm -rf $(IMAGE_CONTEXT) && mkdir -p $(IMAGE_CONTEXT)/data
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '-s -w $(LDFLAGS)' -o $(IMAGE_CONTEXT)/askbridge ./cmd/bridge
	cp /etc/ssl/certs/ca-certificates.crt deploy/image/passwd deploy/image/group $(IMAGE_CONTEXT)/
	podman build -q --pull=never --network=none --format docker -f deploy/Containerfile \
		-t $(IMAGE):$(IMAGE_TAG) -t $(IMAGE):latest $(IMAGE_CONTEXT)

## deploy-check: builds and starts the image, lints and renders the Helm chart for each
## Redis mode and decodes the manifests strictly (installs podman and helm when missing)
deploy-check:
	@./scripts/deploy-check.sh

## run: the bridge on the embedded default (no Redis, no Slack), web inbox at http://127.0.0.1:8080/;
## another address: BRIDGE_ADDR=127.0.0.1:9090 make run. It builds bin/askbridge, then the shell
## execs it: the bridge is make's own child, so Ctrl-C, or kill with make's PID, stops it
## (make passes SIGTERM on), and it prints its own PID
run: build
	exec $(BIN) serve

deps:
	@./scripts/deps.sh

## test: every test with the race detector; installs redis-server and chromium with apt-get when
## missing, and the MCP TypeScript SDK from npm (pinned, cached) when npm is there; the clients'
## tests need Node 22, the frameworks and python3-httpx/pytest/fastapi/mypy/venv (scripts/clients-deps.sh)
test: deps
	$(GO) vet $(PKGS)
	$(GO) vet -tags heapprofile ./cmd/bridge # the scale bench's profiling build (BRIDGE_HEAP_PROFILE)
	$(GO) test -race -count=1 -timeout 9m $(PKGS)

test-short:
	$(GO) test -short -count=1 $(PKGS)

## test-claude-code: opt-in; the real Claude Code CLI (from npm, cached) offline against a fake
## Messages API, with the hook as in docs/agents.md; skipped when npm is missing
test-claude-code:
	@GO=$(GO) ./scripts/claude-code.sh

## lint: gofmt, go vet, staticcheck and errorlint (built from the Go module proxy at pinned versions),
## tsc --strict over clients/typescript and examples/typescript (scripts/clients-lint.sh),
## the layers: no two top-level folders import each other (scripts/layers.sh), and docs/openapi.yaml
## through Redocly CLI (npm, pinned, cached; scripts/openapi-lint.sh; skipped without npm outside CI)
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2
ERRORLINT   := github.com/polyfloyd/go-errorlint@v1.8.0
lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt:"; echo "$$out"; exit 1; fi
	$(GO) vet $(PKGS)
	$(GO) vet -tags heapprofile ./cmd/bridge # the scale bench's profiling build (BRIDGE_HEAP_PROFILE)
	$(GO) run $(STATICCHECK) $(PKGS)
	$(GO) run $(ERRORLINT) -test=false $(PKGS)
	@./scripts/layers.sh >/dev/null
	@./scripts/check-doc-links.sh
	@./scripts/openapi-lint.sh
	@./scripts/clients-lint.sh

## bench: benchmarks (needs redis-server); figures go to BENCHMARKS.md
bench: deps
	$(GO) test -run '^$$' -bench . -benchmem -count=1 $(PKGS)
	$(GO) run ./bench

## bench-compare: ./bench at BASE (a revision) and at the working tree, run alternately RUNS
## times, one table per figure (scripts/bench-compare.sh; ONLY=asks,... picks figures, ARGS more flags,
## SAME_BENCH=1 measures BASE with this tree's bench program, e.g. ONLY=scale)
RUNS ?= 5
ONLY ?=
SAME_BENCH ?=
ARGS ?=
bench-compare:
	@test -n "$(BASE)" || { echo "usage: make bench-compare BASE=<rev> [RUNS=5] [ONLY=asks] [ARGS='-secs 5']"; exit 2; }
	@GO=$(GO) BASE='$(BASE)' RUNS='$(RUNS)' ONLY='$(ONLY)' SAME_BENCH='$(SAME_BENCH)' ./scripts/bench-compare.sh $(ARGS)

## fuzz: every fuzz target for FUZZTIME each (the seed corpora also run in make test)
FUZZTIME ?= 10s
FUZZ_TARGETS := \
	./domain:FuzzAsk \
	./domain:FuzzRespond \
	./server/api:FuzzCreateAndRespond \
	./agent/hook:FuzzHookInput \
	./agent/hook:FuzzShellCommands \
	./agent/hook:FuzzTranscriptLine \
	./cmd/bridge:FuzzConfigFile \
	./adapters/slack:FuzzParseReply \
	./adapters/slack:FuzzInteractionsHandler \
	./adapters/slack:FuzzEventsHandler \
	./adapters/discord:FuzzParseCustomID \
	./adapters/discord:FuzzInteractionText \
	./adapters/discord:FuzzInteractionsHandler \
	./adapters/discord:FuzzInboundDecodersAgree \
	./adapters/web:FuzzRenderContext
fuzz:
	@set -e; for t in $(FUZZ_TARGETS); do pkg=$${t%%:*}; fn=$${t##*:}; \
		echo "== $$fn ($$pkg, $(FUZZTIME))"; \
		$(GO) test -run '^$$' -fuzz "^$$fn\$$" -fuzztime $(FUZZTIME) $$pkg; done

clean:
	rm -rf bin
