# weir: a plain Makefile. `make` builds ./weir; `make check` runs every test;
# `make demo` runs the example; `make deps` installs what a fresh Debian needs.
#
#   make DEVELOPER=1                 warnings are errors
#   make SANITIZE=address,undefined  sanitizer build (objects go to build-san/)

CC       ?= cc
PKGS     := libuv libmicrohttpd sqlite3 jansson yaml-0.1 libxml-2.0 libarchive libcrypto
CFLAGS   ?= -O2 -g
CFLAGS   += -std=c11 -D_GNU_SOURCE -Isrc $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
LDLIBS   += $(shell pkg-config --libs $(PKGS) 2>/dev/null) -lm
BUILD    ?= build

# snprintf truncation is deliberate where we bound messages, so that warning is off.
ifeq ($(DEVELOPER),1)
CFLAGS += -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wformat=2 \
          -Wno-format-nonliteral -Wno-format-truncation
endif
ifneq ($(SANITIZE),)
CFLAGS  += -fsanitize=$(SANITIZE) -fno-omit-frame-pointer -fno-sanitize-recover=all
LDFLAGS += -fsanitize=$(SANITIZE)
BUILD   := build-san
endif

LAYERS   := lib model store sched exec launch api server cli
SRCS     := $(foreach l,$(LAYERS),$(wildcard src/$(l)/*.c))
OBJS     := $(SRCS:%.c=$(BUILD)/%.o)
LIB_OBJS := $(filter-out $(BUILD)/src/cli/main.o,$(OBJS))
DEPS     := $(OBJS:.o=.d)

UNIT_SRCS := $(wildcard tests/unit/*/test_*.c)
UNIT_BINS := $(UNIT_SRCS:%.c=$(BUILD)/%)

.PHONY: all deps check unit system sanitize-check demo fuzz bench clean format

all: weir

weir: $(BUILD)/weir
	@if [ "$(BUILD)" = build ]; then cp $(BUILD)/weir weir; fi

$(BUILD)/weir: $(OBJS)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -MMD -MP -c -o $@ $<

$(BUILD)/tests/unit/%: tests/unit/%.c $(LIB_OBJS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Itests/unit $(LDFLAGS) -o $@ $< $(LIB_OBJS) $(LDLIBS) -lcmocka

-include $(DEPS)

deps:
	@sh tests/install-deps.sh

unit: $(UNIT_BINS) $(BUILD)/weir
	@sh tests/run-unit.sh $(UNIT_BINS)

system: weir
	WEIR_BIN=$(CURDIR)/$(BUILD)/weir /usr/bin/python3 -m pytest -q tests/system $(PYTEST_ARGS)

# Every test: a warnings-as-errors build, unit and system tests, then the same
# under AddressSanitizer and UBSan.
check: deps
	$(MAKE) DEVELOPER=1 weir
	$(MAKE) DEVELOPER=1 unit
	$(MAKE) DEVELOPER=1 system
	$(MAKE) sanitize-check

sanitize-check:
	$(MAKE) DEVELOPER=1 SANITIZE=address,undefined unit
	$(MAKE) DEVELOPER=1 SANITIZE=address,undefined system PYTEST_ARGS="$(SAN_PYTEST_ARGS)"

demo: deps weir
	sh examples/demo.sh

FUZZ_SECONDS ?= 20
fuzz: deps
	sh tests/fuzz/run.sh $(FUZZ_SECONDS)

bench: weir
	sh bench/run.sh

format:
	clang-format -i $(SRCS) $(wildcard src/*/*.h)

clean:
	rm -rf build build-san build-fuzz weir
