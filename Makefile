# perfgate: a plain GNU Makefile (see README.md).
#
#   make                 build both daemons into $(BUILD)/
#   make check           unit tests, the same under ASan+UBSan, integration tests,
#                        the dashboard in chromium (make browser), the short forms
#                        of the fault suite and of the fuzzers
#   make check-faults    the fault-injection suite (tests/faults/), FAULT_REPS each
#   make fuzz            every libFuzzer target (FUZZ_SECONDS or FUZZ_RUNS each)
#   make DEVELOPER=1     warnings are errors
#   make SANITIZE=address,undefined   build with sanitizers (into build/san)
#   make install PREFIX=/usr DESTDIR=/tmp/stage

VERSION := 0.1.0

PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
SYSCONFDIR ?= $(PREFIX)/etc
DATADIR ?= $(PREFIX)/share
LOCALSTATEDIR ?= /var/lib
UNITDIR ?= $(PREFIX)/lib/systemd/system

CC ?= cc
CFLAGS ?= -O2 -g
PKG_CONFIG ?= pkg-config
PKGS := libcurl libgit2 libssh libcjson sqlite3 libmicrohttpd libcrypto zlib

ifdef SANITIZE
BUILD ?= build/san
SAN_FLAGS := -fsanitize=$(SANITIZE) -fno-sanitize-recover=all -fno-omit-frame-pointer
else
BUILD ?= build
SAN_FLAGS :=
endif

WARN := -Wall -Wextra -Wshadow -Wformat=2 -Wstrict-prototypes -Wmissing-prototypes \
	-Wpointer-arith -Wvla -Wundef -Wimplicit-fallthrough -Wno-unused-parameter
ifeq ($(DEVELOPER),1)
WARN += -Werror
endif

PATH_DEFS := -DPG_VERSION='"$(VERSION)"' -DPG_SYSCONFDIR='"$(SYSCONFDIR)"' \
	-DPG_DATADIR='"$(DATADIR)"' -DPG_LOCALSTATEDIR='"$(LOCALSTATEDIR)"' \
	-DPG_SRCDIR='"$(CURDIR)"'

PKG_CFLAGS := $(shell $(PKG_CONFIG) --cflags $(PKGS) 2>/dev/null)
PKG_LIBS := $(shell $(PKG_CONFIG) --libs $(PKGS) 2>/dev/null)

ALL_CFLAGS := -std=c11 -D_XOPEN_SOURCE=700 -D_DEFAULT_SOURCE $(WARN) $(CFLAGS) $(SAN_FLAGS) \
	$(PATH_DEFS) $(PKG_CFLAGS) -MMD -MP

# The layers, as the compiler sees them: a file may include headers of its
# own folder and of the folders below it, never of one beside or above it.
#   lib/         the ground floor: buffers, errors, processes, files, JSON,
#                profiles, git and time helpers
#   patches/     mail, mbox, trailers, Patchwork and applying: lib/
#   controller/  the controller: patches/ and lib/, never agent/
#   agent/       the agent: patches/ and lib/, never controller/
# Tests, tools and benchmarks see every folder.
INC_lib := -iquote lib
INC_patches := $(INC_lib) -iquote patches
INC_controller := $(INC_patches) -iquote controller
INC_agent := $(INC_patches) -iquote agent
INC_all := $(INC_patches) -iquote controller -iquote agent
layer = $(or $(INC_$(firstword $(subst /, ,$(1)))),$(INC_all))
ALL_LDFLAGS := $(LDFLAGS) $(SAN_FLAGS)
LIBS := $(PKG_LIBS) -lpthread -lm

LIB_SRC := $(wildcard lib/*.c patches/*.c)
CTL_SRC := $(filter-out controller/main.c,$(wildcard controller/*.c))
AGENT_SRC := $(filter-out agent/main.c,$(wildcard agent/*.c))
UNIT_SRC := $(wildcard tests/unit/test_*.c)
TOOL_SRC := $(wildcard tests/tools/*.c)
BENCH_SRC := $(wildcard bench/*.c)

obj = $(patsubst %.c,$(BUILD)/obj/%.o,$(1))

LIB_A := $(BUILD)/libperfgate.a
CTL_A := $(BUILD)/libcontroller.a
AGENT_A := $(BUILD)/libagent.a
CONTROLLER := $(BUILD)/perfgate-controller
AGENT := $(BUILD)/perfgate-agent
UNIT_BINS := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(UNIT_SRC))
TOOL_BINS := $(patsubst tests/tools/%.c,$(BUILD)/tests/tools/%,$(TOOL_SRC))
BENCH_BINS := $(patsubst bench/%.c,$(BUILD)/bench/%,$(BENCH_SRC))
# LD_PRELOAD shims for the bench and the fault suite (a slow disk), built
# without the sanitizers: they are loaded into programs that may not be.
PRELOAD_SRC := $(wildcard tests/preload/*.c)
PRELOAD_LIBS := $(patsubst tests/preload/%.c,$(BUILD)/tests/preload/%.so,$(PRELOAD_SRC))

.SECONDARY:

.PHONY: FORCE all deps check check-faults unit unit-bins integration browser screenshots lint install uninstall demo demo-clean bench fuzz fuzz-bins fuzz-short clean

all: $(CONTROLLER) $(AGENT)

# Rebuild everything when the flags change (a new PREFIX changes the
# compiled-in default paths), as git does with GIT-CFLAGS.
$(BUILD)/CFLAGS: FORCE
	$(shell mkdir -p $(BUILD))$(file >$@.new,$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS))
	@if cmp -s $@.new $@; then rm -f $@.new; else mv -f $@.new $@; fi

$(BUILD)/obj/%.o: %.c $(BUILD)/CFLAGS
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(call layer,$<) -c -o $@ $<

$(LIB_A): $(call obj,$(LIB_SRC))
	@rm -f $@
	$(AR) rcs $@ $^
$(CTL_A): $(call obj,$(CTL_SRC))
	@rm -f $@
	$(AR) rcs $@ $^
$(AGENT_A): $(call obj,$(AGENT_SRC))
	@rm -f $@
	$(AR) rcs $@ $^

$(CONTROLLER): $(call obj,controller/main.c) $(CTL_A) $(LIB_A)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LIBS)
$(AGENT): $(call obj,agent/main.c) $(AGENT_A) $(LIB_A)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LIBS)

$(BUILD)/tests/%: $(call obj,tests/unit/%.c) $(CTL_A) $(AGENT_A) $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LIBS) -lcmocka
$(BUILD)/tests/tools/%: $(call obj,tests/tools/%.c) $(CTL_A) $(AGENT_A) $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LIBS)
$(BUILD)/bench/%: $(call obj,bench/%.c) $(CTL_A) $(AGENT_A) $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LIBS)
$(BUILD)/tests/preload/%.so: tests/preload/%.c
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -O2 -g -Wall -Wextra -Werror -fPIC -shared -o $@ $<

# Debian packages for the build, the tests and the demo (idempotent).
deps:
	./scripts/deps.sh

# The README's test command.
# Installs what the tests need first (make deps does nothing when all is
# there), so that a fresh machine needs only this command.
NPROC := $(shell nproc 2>/dev/null || echo 1)
check: deps lint
	$(MAKE) -j$(NPROC) unit-bins
	$(MAKE) unit
	$(MAKE) -j$(NPROC) SANITIZE=address,undefined unit-bins
	$(MAKE) SANITIZE=address,undefined unit
	$(MAKE) integration
	$(MAKE) browser
	$(MAKE) check-faults FAULT_REPS=1
	$(MAKE) -j$(NPROC) fuzz-bins
	$(MAKE) fuzz-short FUZZ_SHORT_SECONDS=3

# The unit test binaries alone, so that check can build them with -j and
# still run the tests one at a time.
unit-bins: $(UNIT_BINS)
unit: $(UNIT_BINS)
	./tests/run-unit.sh $(UNIT_BINS)

integration: all $(TOOL_BINS) $(PRELOAD_LIBS)
	./tests/integration/run.sh $(abspath $(BUILD))

# The fault-injection suite (tests/faults/): each case FAULT_REPS times, and
# a table of lost and duplicated results and checks.  make check runs the
# short form (FAULT_REPS=1).
FAULT_REPS ?= 10
check-faults: all $(TOOL_BINS) $(BENCH_BINS) $(PRELOAD_LIBS)
	FAULT_REPS=$(FAULT_REPS) ./tests/faults/run.sh $(abspath $(BUILD))

# The dashboard in Debian's chromium (make deps) with playwright-core,
# which run.sh installs from tests/browser/package-lock.json into
# $(BUILD)/browser/ (npm ci, once); screenshots in $(BUILD)/screenshots/.
browser: all
	./tests/browser/run.sh $(abspath $(BUILD))

# The README's pictures of the dashboard, as the browser tests took them.
SCREENSHOTS := list series-log trends agents queue changes agents-noise agents-ssh
screenshots: browser
	@mkdir -p tests/browser/screenshots
	for s in $(SCREENSHOTS); do cp $(BUILD)/screenshots/$$s.png tests/browser/screenshots/; done

# Functions we never call (after curl's banned list): unbounded string
# writes, unchecked number parsing, and shell strings.
BANNED := sprintf|vsprintf|strcpy|strcat|gets|atoi|atol|atof|system|popen|strtok
lint:
	@if grep -nE '\<($(BANNED))[[:space:]]*\(' $(LIB_SRC) $(CTL_SRC) $(AGENT_SRC) \
	    controller/main.c agent/main.c $(wildcard tests/unit/*.c tests/tools/*.c tests/preload/*.c bench/*.c); then \
		echo "lint: banned function used (see Makefile BANNED)"; exit 1; \
	fi
	@echo "lint: no banned functions"

# libFuzzer targets: each tests/fuzz/fuzz_NAME.c linked with the sources
# built once by clang with the fuzzer's coverage and ASan+UBSan into
# build/fuzz/obj (archives, so that a target pulls only what it calls),
# then run by tests/fuzz/run.sh from its seed corpus tests/fuzz/corpus/NAME/:
# FUZZ_SECONDS each, or until FUZZ_RUNS executions (capped at
# FUZZ_MAX_TIME seconds); a table of executions and findings, and a
# nonzero exit on any finding.  fuzz-short is the form make check runs.
FUZZ_SRC := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_BINS := $(patsubst tests/fuzz/%.c,build/fuzz/%,$(FUZZ_SRC))
FUZZ_SECONDS ?= 30
FUZZ_RUNS ?=
FUZZ_MAX_TIME ?= 600
FUZZ_SHORT_SECONDS ?= 10
FUZZ_CC ?= clang
FUZZ_SAN := -fsanitize=address,undefined -fno-sanitize-recover=all
FUZZ_CFLAGS := -std=c11 -D_XOPEN_SOURCE=700 -D_DEFAULT_SOURCE -g -O1 -fno-omit-frame-pointer \
	$(FUZZ_SAN) $(PATH_DEFS) $(PKG_CFLAGS) -MMD -MP
fuzz_obj = $(patsubst %.c,build/fuzz/obj/%.o,$(1))
FUZZ_LIB_A := build/fuzz/libperfgate.a
FUZZ_CTL_A := build/fuzz/libcontroller.a
FUZZ_AGENT_A := build/fuzz/libagent.a
# The archives a target needs beyond lib/ and patches/: the agent's or the
# controller's (never both: they are two programs).
FUZZ_AGENT_TARGETS := fuzz_harness fuzz_bench_mempool fuzz_bench_testpmd fuzz_runone_line \
	fuzz_jobspec fuzz_config_agent
FUZZ_CTL_TARGETS := fuzz_route fuzz_agent_api fuzz_config_ctl
build/fuzz/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link $(call layer,$<) -c -o $@ $<
$(FUZZ_LIB_A): $(call fuzz_obj,$(LIB_SRC))
	@rm -f $@
	$(AR) rcs $@ $^
$(FUZZ_CTL_A): $(call fuzz_obj,$(CTL_SRC))
	@rm -f $@
	$(AR) rcs $@ $^
$(FUZZ_AGENT_A): $(call fuzz_obj,$(AGENT_SRC))
	@rm -f $@
	$(AR) rcs $@ $^
$(foreach t,$(FUZZ_AGENT_TARGETS),$(eval build/fuzz/$(t): $(FUZZ_AGENT_A)))
$(foreach t,$(FUZZ_CTL_TARGETS),$(eval build/fuzz/$(t): $(FUZZ_CTL_A)))
build/fuzz/fuzz_%: build/fuzz/obj/tests/fuzz/fuzz_%.o $(FUZZ_LIB_A)
	$(FUZZ_CC) $(FUZZ_SAN) -fsanitize=fuzzer -o $@ $< \
		$(filter-out $(FUZZ_LIB_A),$(filter %.a,$^)) $(FUZZ_LIB_A) $(LIBS)
fuzz-bins: $(FUZZ_BINS)
fuzz: $(FUZZ_BINS)
	FUZZ_SECONDS=$(FUZZ_SECONDS) FUZZ_RUNS=$(FUZZ_RUNS) FUZZ_MAX_TIME=$(FUZZ_MAX_TIME) \
		./tests/fuzz/run.sh $(FUZZ_BINS)
fuzz-short: $(FUZZ_BINS)
	FUZZ_SECONDS=$(FUZZ_SHORT_SECONDS) ./tests/fuzz/run.sh $(FUZZ_BINS)

bench: all $(BENCH_BINS) $(TOOL_BINS) $(PRELOAD_LIBS)
	PG_BUILD=$(abspath $(BUILD)) ./bench/run.sh $(BENCH_BINS) $(wildcard bench/*.sh)

demo:
	./scripts/demo.sh

# The demo's state: the agent's build directories and ccache, the store,
# the archive and the logs (var/demo).
demo-clean:
	rm -rf var/demo

install: all
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(SYSCONFDIR)/perfgate \
		$(DESTDIR)$(DATADIR)/perfgate/profiles $(DESTDIR)$(DATADIR)/perfgate/web \
		$(DESTDIR)$(UNITDIR)
	install -m 755 $(CONTROLLER) $(AGENT) $(DESTDIR)$(BINDIR)/
	install -m 644 profiles/*.json $(DESTDIR)$(DATADIR)/perfgate/profiles/
	install -d $(DESTDIR)$(DATADIR)/doc/perfgate
	install -m 644 README.md $(DESTDIR)$(DATADIR)/doc/perfgate/
	cp -R web/. $(DESTDIR)$(DATADIR)/perfgate/web/
	for f in controller agent; do \
		sed -e 's|@DATADIR@|$(DATADIR)|g' -e 's|@LOCALSTATEDIR@|$(LOCALSTATEDIR)|g' \
			etc/$$f.json.in > $(BUILD)/$$f.json && \
		if [ ! -e $(DESTDIR)$(SYSCONFDIR)/perfgate/$$f.json ]; then \
			install -m 640 $(BUILD)/$$f.json $(DESTDIR)$(SYSCONFDIR)/perfgate/$$f.json; \
		fi; \
		sed -e 's|@BINDIR@|$(BINDIR)|g' -e 's|@SYSCONFDIR@|$(SYSCONFDIR)|g' \
			-e 's|@DATADIR@|$(DATADIR)|g' -e 's|@LOCALSTATEDIR@|$(LOCALSTATEDIR)|g' \
			etc/perfgate-$$f.service.in > $(BUILD)/perfgate-$$f.service && \
		install -m 644 $(BUILD)/perfgate-$$f.service $(DESTDIR)$(UNITDIR)/; \
	done

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/perfgate-controller $(DESTDIR)$(BINDIR)/perfgate-agent \
		$(DESTDIR)$(UNITDIR)/perfgate-controller.service $(DESTDIR)$(UNITDIR)/perfgate-agent.service
	rm -rf $(DESTDIR)$(DATADIR)/perfgate

clean:
	rm -rf build

-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)
-include $(shell find build/fuzz/obj -name '*.d' 2>/dev/null)
