# weir: a plain Makefile. `make` builds ./weir; `make check` runs every test;
# `make demo` runs the example job, `make demo-pipeline` the example pipeline; `make deps`
# installs what a fresh Debian needs; `make install` installs weir (docs/install.md).
#
#   make DEVELOPER=1                 warnings are errors
#   make SANITIZE=address,undefined  sanitizer build (objects go to build-san/)

CC       ?= cc
PKGS     := libuv sqlite3 jansson yaml-0.1 nettle
# compiled against, loaded at their first use (src/lib/dynlib.h), not linked: they pull in
# some forty more libraries that every start of weir (each CLI command) would load
DL_PKGS  := libxml-2.0 libarchive libpq libmariadb libmicrohttpd gnutls
CFLAGS   ?= -O2 -g
CFLAGS   += -std=c11 -D_GNU_SOURCE -Isrc $(shell pkg-config --cflags $(PKGS) $(DL_PKGS) 2>/dev/null)
# linked from their static archives where this system has them all (Debian's -dev packages
# do): every start of weir (each CLI command) then maps libc and libm only, not seven
# libraries; the dynamic loader's work was half of a `weir --version` (docs/benchmarks.md).
# STATIC_DEPS=0 links them dynamically: the Debian package does (debian/rules), as Debian
# wants a library's security fix to reach every program through its package.
STATIC_DEPS ?= 1
STATIC_A := $(if $(filter 0,$(STATIC_DEPS)),,$(foreach a,uv_a sqlite3 jansson yaml nettle,\
              $(wildcard $(shell pkg-config --variable=libdir libuv 2>/dev/null)/lib$(a).a)))
ifeq ($(words $(STATIC_A)),5)
LDLIBS   += $(STATIC_A) -lpthread -ldl -lrt -lm
else
LDLIBS   += $(shell pkg-config --libs $(PKGS) 2>/dev/null) -lm
endif
# the name each of DL_PKGS is opened by, as this system's library says it (its SONAME)
soname    = $(shell readelf -d $$(pkg-config --variable=libdir $(1) 2>/dev/null)/lib$(2).so 2>/dev/null | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
SONAMES  := $(foreach p,PQ:libpq:pq MARIADB:libmariadb:mariadb XML2:libxml-2.0:xml2 ARCHIVE:libarchive:archive \
              MHD:libmicrohttpd:microhttpd GNUTLS:gnutls:gnutls,\
              $(eval n := $(call soname,$(word 2,$(subst :, ,$(p))),$(word 3,$(subst :, ,$(p)))))\
              $(if $(n),-DWEIR_SONAME_$(word 1,$(subst :, ,$(p)))='"$(n)"'))
CFLAGS   += $(SONAMES)
BUILD    ?= build
# The version has one source, python/weir/_version.py: the Python package and its
# pyproject.toml read it, and so does this (`weir --version`, the API's `version`).
VERSION  := $(shell sed -n 's/^__version__ = "\([^"]*\)"$$/\1/p' python/weir/_version.py)
ifeq ($(VERSION),)
$(error python/weir/_version.py: no line __version__ = "X.Y.Z")
endif
CFLAGS   += -DWEIR_VERSION='"$(VERSION)"'

# snprintf truncation is deliberate where we bound messages, so that warning is off.
ifeq ($(DEVELOPER),1)
CFLAGS += -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wformat=2 \
          -Wno-format-nonliteral -Wno-format-truncation
# strcpy, sprintf and the like stop the build (src/lib/banned.h says why and what instead)
CFLAGS += -include lib/banned.h
# test hooks (e.g. WEIR_TEST_DIE_AFTER_SBATCH, docs/internals/slurm_tests.md): developer builds only
CFLAGS += -DWEIR_TEST_HOOKS
endif
ifneq ($(SANITIZE),)
CFLAGS  += -fsanitize=$(SANITIZE) -fno-omit-frame-pointer -fno-sanitize-recover=all
LDFLAGS += -fsanitize=$(SANITIZE)
BUILD   := build-san
endif

LAYERS   := lib model store sched exec data launch api server cli
SRCS     := $(filter-out src/cli/launch_only_main.c,$(foreach l,$(LAYERS),$(wildcard src/$(l)/*.c src/$(l)/*/*.c)))
# The web UI's files (ui/) compiled into weir as C arrays by tools/embed_assets.c
# (docs/internals/ui.md).  The list is kept in a file that changes only when a
# file is added or removed, so that either rebuilds the table.
UI_FILES := $(shell find ui -type f ! -name '.*' 2>/dev/null | LC_ALL=C sort)
UI_GEN   := $(BUILD)/gen/ui_assets_data.c
OBJS     := $(SRCS:%.c=$(BUILD)/%.o) $(UI_GEN:.c=.o)
LIB_OBJS := $(filter-out $(BUILD)/src/cli/main.o,$(OBJS))

# weir-launch: the same launcher code as `weir launch`, linked against libc
# and jansson only, because it starts once per task (docs/internals/launch.md); GnuTLS
# (an https server) is opened at its first use (src/lib/dynlib.h), never linked.
LEAN_SRCS := src/cli/launch_only_main.c $(wildcard src/launch/*.c) \
             src/exec/agent_proto.c src/lib/artifact_cache.c src/lib/clock.c src/lib/error.c src/lib/fs.c \
             src/lib/dynlib.c src/lib/env_scrub.c src/lib/grow.c src/lib/hashmap.c src/lib/http_client.c src/lib/json_line.c src/lib/log.c src/lib/mask.c src/lib/proc.c src/lib/run_as.c src/lib/shell.c src/lib/str.c \
             src/lib/strbuf.c src/lib/strvec.c src/lib/tls.c src/lib/usock.c src/model/end_cause.c src/model/framework.c
LEAN_OBJS := $(LEAN_SRCS:%.c=$(BUILD)/%.o)
DEPS     := $(OBJS:.o=.d) $(LEAN_OBJS:.o=.d)

# Every header compiles alone (hdr-check): one stamp per header, remade when it
# or a header it includes changes.
HDRS     := $(wildcard src/*/*.h src/*/*/*.h)
HDR_OKS  := $(HDRS:%.h=$(BUILD)/hdr/%.ok)

UNIT_SRCS := $(wildcard tests/unit/*/test_*.c)
UNIT_BINS := $(UNIT_SRCS:%.c=$(BUILD)/%)
# tests that make archives themselves (test_workdir.c) call libarchive directly
UNIT_LDLIBS := $(shell pkg-config --libs libarchive 2>/dev/null)

.PHONY: all man install uninstall deb deps check chaos hdr-check include-check unit python-unit system ui-check ui-screenshots sanitize-check demo demo-pipeline fuzz bench clean format format-check FORCE

all: weir

weir: $(BUILD)/weir $(BUILD)/weir-launch
	@if [ "$(BUILD)" = build ]; then ln -sfn $(BUILD)/weir weir; ln -sfn $(BUILD)/weir-launch weir-launch; fi

$(BUILD)/weir: $(OBJS)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/weir-launch: $(LEAN_OBJS)
	$(CC) $(LDFLAGS) -o $@ $^ $(shell pkg-config --libs jansson)

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -MMD -MP -c -o $@ $<

$(BUILD)/tools/embed_assets: tools/embed_assets.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $<

$(BUILD)/gen/ui_files.list: FORCE
	@mkdir -p $(dir $@)
	@echo '$(UI_FILES)' | cmp -s - $@ || echo '$(UI_FILES)' > $@

$(UI_GEN): $(BUILD)/tools/embed_assets $(BUILD)/gen/ui_files.list $(UI_FILES)
	$(BUILD)/tools/embed_assets $@ ui $(UI_FILES)

$(BUILD)/gen/%.o: $(BUILD)/gen/%.c
	$(CC) $(CPPFLAGS) $(CFLAGS) -MMD -MP -c -o $@ $<

FORCE:

$(BUILD)/tests/unit/%: tests/unit/%.c $(LIB_OBJS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Itests/unit $(LDFLAGS) -o $@ $< $(LIB_OBJS) $(LDLIBS) $(UNIT_LDLIBS) -lcmocka

$(BUILD)/hdr/%.ok: %.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -fsyntax-only -x c -MMD -MP -MF $(@:.ok=.d) -MT $@ $<
	@touch $@

-include $(DEPS) $(HDR_OKS:.ok=.d)

# the objects that print the version: remade when it changes
$(BUILD)/src/cli/main.o $(BUILD)/src/api/api.o: python/weir/_version.py

deps:
	@sh tests/install-deps.sh

# make install [PREFIX=/usr/local] [DESTDIR=] [INSTALL_UNITS=1] (docs/install.md): the two
# programs, the Python package where `weir run` looks (PREFIX/share/weir/python), the docs,
# the man pages; with INSTALL_UNITS=1 the systemd units (server, agent) and /etc/weir/weir.yaml (kept
# when there).  `make uninstall` with the same variables removes what it installed.
PREFIX   ?= /usr/local
BINDIR   ?= $(PREFIX)/bin
DATADIR  ?= $(PREFIX)/share
PYDIR    ?= $(DATADIR)/weir/python
DOCDIR   ?= $(DATADIR)/doc/weir
MANDIR   ?= $(DATADIR)/man
UNITDIR  ?= $(PREFIX)/lib/systemd/system
SYSCONFDIR ?= /etc
INSTALL  ?= install
UNITS    := weir-server.service weir-agent.service
DOC_FILES := README.md $(wildcard docs/*.md) $(wildcard docs/ui/*.png)
PY_FILES = $(shell cd python && find weir -type f ! -path '*/__pycache__/*' ! -name '*.pyc' | LC_ALL=C sort)

# weir(1) and weir-GROUP(1), one per group of `weir --help`, and airflow(1), from the built program's own
# help text (tools/gen_man.py); made again each time, it takes a few milliseconds
man: $(BUILD)/weir
	WEIR_PYTHON_DIR=$(CURDIR)/python python3 tools/gen_man.py $(BUILD)/weir $(BUILD)/man $(VERSION) $(DOCDIR)

$(BUILD)/systemd/%: packaging/systemd/%.in FORCE
	@mkdir -p $(dir $@)
	sed 's|@BINDIR@|$(BINDIR)|g' $< > $@

install: $(BUILD)/weir $(BUILD)/weir-launch man $(if $(INSTALL_UNITS),$(UNITS:%=$(BUILD)/systemd/%))
	$(INSTALL) -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(PYDIR) $(DESTDIR)$(DOCDIR)/docs/ui $(DESTDIR)$(MANDIR)/man1
	$(INSTALL) -m 755 $(BUILD)/weir $(BUILD)/weir-launch $(DESTDIR)$(BINDIR)/
	ln -sf weir $(DESTDIR)$(BINDIR)/airflow
	cd python && for f in $(PY_FILES); do $(INSTALL) -D -m 644 $$f $(DESTDIR)$(PYDIR)/$$f || exit 1; done
	for f in $(DOC_FILES); do $(INSTALL) -m 644 $$f $(DESTDIR)$(DOCDIR)/$$f || exit 1; done
	$(INSTALL) -m 644 $(BUILD)/man/*.1 $(DESTDIR)$(MANDIR)/man1/
ifneq ($(INSTALL_UNITS),)
	$(INSTALL) -d $(DESTDIR)$(UNITDIR) $(DESTDIR)$(SYSCONFDIR)/weir
	$(INSTALL) -m 644 $(UNITS:%=$(BUILD)/systemd/%) $(DESTDIR)$(UNITDIR)/
	[ -e $(DESTDIR)$(SYSCONFDIR)/weir/weir.yaml ] || \
		$(INSTALL) -m 644 packaging/weir.yaml $(DESTDIR)$(SYSCONFDIR)/weir/weir.yaml
endif

# The Debian package (debian/, docs/install.md), built by Debian's tools on a copy of the
# tree (git's files, committed or not) under $(BUILD)/deb, where the .deb lands:
# dpkg-buildpackage writes beside the folder it builds in.  The package's build takes none
# of this make's variables (`make deb DEVELOPER=1` builds without -Werror and the test
# hooks); DEB_BUILD_OPTIONS=parallel=2 builds with -j2.
DEB_SRC := $(BUILD)/deb/weir-$(VERSION)
deb:
	@v=$$(dpkg-parsechangelog -S Version); [ "$$v" = "$(VERSION)" ] || \
		{ echo "debian/changelog: version $$v, python/weir/_version.py: $(VERSION); add an entry (dch -v $(VERSION))"; exit 1; }
	rm -rf $(BUILD)/deb && mkdir -p $(DEB_SRC)
	git ls-files -co --exclude-standard -z | xargs -0 cp --parents -d -t $(DEB_SRC)
	cd $(DEB_SRC) && env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u DEVELOPER -u SANITIZE \
		dpkg-buildpackage -us -uc -b
	@ls $(BUILD)/deb/*.deb

# /etc/weir/weir.yaml stays (it may hold a team's changes), as the home /var/lib/weir does
uninstall:
	rm -f $(DESTDIR)$(BINDIR)/weir $(DESTDIR)$(BINDIR)/weir-launch $(DESTDIR)$(BINDIR)/airflow
	rm -rf $(DESTDIR)$(DATADIR)/weir $(DESTDIR)$(DOCDIR)
	rm -f $(DESTDIR)$(MANDIR)/man1/weir.1 $(DESTDIR)$(MANDIR)/man1/weir-*.1 \
		$(DESTDIR)$(MANDIR)/man1/airflow.1
	rm -f $(UNITS:%=$(DESTDIR)$(UNITDIR)/%)

# Each header as its own translation unit, with the build's flags: a header
# includes what it uses (docs/internals/design.md: headers carry the contract).
hdr-check: $(HDR_OKS)

# Includes follow the layer tables of docs/internals/design.md and form no circle;
# the script's own test first.
include-check:
	@sh tests/tools/test_check_includes.sh
	@python3 tools/check_includes.py src
	@sh tests/tools/test_check_state_doors.sh
	@python3 tools/check_state_doors.py src

unit: $(UNIT_BINS) $(BUILD)/weir $(BUILD)/weir-launch
	@sh tests/run-unit.sh $(UNIT_BINS)

# The Python package's own tests (no server; tests/python) and mypy --strict on it.  weir's
# `airflow` package (weir/compat/airflow/site/) is checked as `airflow`, the name DAG files
# import it by.
python-unit: weir
	WEIR_BIN=$(CURDIR)/$(BUILD)/weir /usr/bin/python3 -m pytest -q tests/python
	cd python && MYPYPATH=weir/compat/airflow/site /usr/bin/python3 -m mypy --strict \
	    --exclude 'weir/compat/airflow/site/' weir
	cd python/weir/compat/airflow/site && MYPYPATH=$(CURDIR)/python /usr/bin/python3 -m mypy --strict \
	    --config-file $(CURDIR)/python/pyproject.toml -p airflow -p _weir_airflow

system: weir
	WEIR_BIN=$(CURDIR)/$(BUILD)/weir /usr/bin/python3 -m pytest -q tests/system $(PYTEST_ARGS)

# Browser tests of the web UI: headless chromium against a real server (tests/ui/harness.mjs).
ui-check: weir
	cd tests/ui && WEIR_BIN=$(CURDIR)/$(BUILD)/weir node --test --test-concurrency=1 test_*.mjs

# The browser tests again, saving their screenshots into docs/ui (the pictures docs/ui.md shows).
ui-screenshots: weir
	WEIR_UI_SHOTS=$(CURDIR)/docs/ui $(MAKE) ui-check

# Every test: a warnings-as-errors build, the header and include checks, unit, the Python
# package's unit tests and type check, system and browser tests, then unit and system
# tests under AddressSanitizer and UBSan.
check: deps
	$(MAKE) DEVELOPER=1 weir
	$(MAKE) DEVELOPER=1 hdr-check
	$(MAKE) include-check
	$(MAKE) format-check
	$(MAKE) DEVELOPER=1 unit
	$(MAKE) DEVELOPER=1 python-unit
	$(MAKE) DEVELOPER=1 system
	$(MAKE) DEVELOPER=1 ui-check
	$(MAKE) sanitize-check

# The chaos tests at the issue's size: a DAG of 10 layers of 20 tasks and a 4-worker job while
# the server is killed with kill -9 twenty times (tests/system/test_chaos_server_kill.py), and
# the node's agent ten times, the server and the agent together five, five random shims,
# twenty rounds of these mixed, on the host's cgroups and without
# (tests/system/test_chaos_agent_kill.py); a Ray program's calls and actors through twelve
# kills of each kind (tests/system/test_chaos_ray.py); a line per round, stress-ng --cpu 2
# beside them when installed.  `make check` runs their short variants.  And 3000 power cuts under the store
# (tests/unit/store/test_powercut.c; `make unit` runs 200).
chaos: weir $(BUILD)/tests/unit/store/test_powercut
	WEIR_CHAOS_FULL=1 WEIR_BIN=$(CURDIR)/$(BUILD)/weir /usr/bin/python3 -m pytest -q -s \
		tests/system/test_chaos_server_kill.py tests/system/test_chaos_agent_kill.py \
		tests/system/test_chaos_ray.py $(PYTEST_ARGS)
	WEIR_POWERCUT_ROUNDS=3000 $(BUILD)/tests/unit/store/test_powercut

# The sanitizer pass leaves out the million-row transfers (the same streaming
# code as the smaller transfer tests, ten times the rows) and the Python
# package's tests (Python over routes the other tests drive): both would take
# most of the pass's time and find nothing the rest cannot.  It also leaves out
# the thousand waiting sensors, whose check is the server's resident memory:
# AddressSanitizer keeps freed memory in quarantine, so that figure grows there
# by design (the sensor tests with fewer sensors run).  And the Debian package's test, which
# builds its own package and does not use the sanitizer build.  Ray programs and the Airflow
# corpus, conformance and virtualenv files run mostly Python (the program, the DAG file, pip)
# over C paths that test_ray_warm.py and the other Airflow tests drive; the Slurm-busy test
# spends its two minutes waiting for Slurm.  They run in the plain pass.
SAN_PYTEST_ARGS ?= -k 'not million_rows and not test_python_ and not a_thousand_rescheduling and not test_install_start_remove_purge and not a_job_slurm_cannot_take_yet and (not test_ray_ or test_ray_warm) and not test_chaos_ray and not test_airflow_corpus and not test_airflow_conformance and not test_airflow_virtualenv'

sanitize-check:
	$(MAKE) DEVELOPER=1 SANITIZE=address,undefined unit
	$(MAKE) DEVELOPER=1 SANITIZE=address,undefined system PYTEST_ARGS="$(SAN_PYTEST_ARGS)"

demo: deps weir
	sh examples/demo.sh

# The recommender pipeline on real PostgreSQL, ClickHouse and Redis (examples/recsys/).
demo-pipeline: deps weir
	WEIR_BIN=$(CURDIR)/$(BUILD)/weir /usr/bin/python3 examples/recsys/demo_pipeline.py

FUZZ_SECONDS ?= 20
fuzz: deps
	sh tests/fuzz/run.sh $(FUZZ_SECONDS)

bench: weir
	sh bench/run.sh

# clang-format over every C file of src/ (.clang-format); format-check fails, naming
# the files, where one is not laid out as it would lay it out (part of make check).
FORMAT_FILES = $(SRCS) src/cli/launch_only_main.c $(HDRS)

format:
	clang-format -i $(FORMAT_FILES)

format-check:
	@bad=$$(for f in $(FORMAT_FILES); do clang-format --dry-run -Werror $$f >/dev/null 2>&1 || echo $$f; done); \
	if [ -n "$$bad" ]; then echo "not clang-formatted (make format):"; echo "$$bad"; exit 1; fi; \
	echo "format-check: $(words $(FORMAT_FILES)) files as clang-format lays them out"

clean:
	rm -rf build build-san build-fuzz weir weir-launch
