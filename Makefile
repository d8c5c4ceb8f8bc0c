# The README's two commands are `make run` and `make test`; the rest are conveniences.
PREFIX ?= /usr/local
DESTDIR ?=

.PHONY: build run web test bench install deb format

build:
	scripts/deps.sh
	swift build

# The demo writes its socket and state under .run/ in the checkout (scripts/run.sh says where).
run: build
	scripts/run.sh $(ARGS)

# sectiond on the demo list and its web page (web/, through websocketd); prints the address.
# WEB_PORT=8090 picks the port, WEB_READONLY=1 the read-only socket; ARGS go to sectiond.
web:
	scripts/web.sh $(ARGS)

test:
	scripts/test.sh

bench:
	scripts/deps.sh --test
	python3 bench/bench.py
	python3 bench/dbus_bench.py --no-build

install:
	scripts/deps.sh
	PREFIX=$(PREFIX) DESTDIR=$(DESTDIR) scripts/install.sh

# build/sectiond_VERSION_ARCH.deb (release build, static Swift runtime); VERSION=... overrides.
deb:
	scripts/deps.sh --deb
	scripts/deb.sh

format:
	swift format -i -r Sources Tests Package.swift
