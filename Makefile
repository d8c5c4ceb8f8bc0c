# The README's two commands are `make run` and `make test`; the rest are conveniences.
# `make help` lists the targets: each is the line after its `##` comment.
PREFIX ?= /usr/local
DESTDIR ?=

.PHONY: help build run web fleet check test asan fuzz package-test bench perf-report etcd-lab install uninstall deb format

## help: this list
help:
	@sed -n 's/^## //p' $(MAKEFILE_LIST)

## build: the debug binaries in .build/debug (installs the Debian packages the build needs)
build:
	scripts/deps.sh
	swift build

## run: sectiond on the demo list, its socket and state under .run/ (ARGS go to sectiond)
run: build
	scripts/run.sh $(ARGS)

## web: the web page on a new demo daemon, or on yours: WEB_SOCKET=PATH (WEB_PORT, WEB_READONLY=1)
web:
	scripts/web.sh $(ARGS)

## fleet: one list on three hosts here: three etcd members and three sectiond, how to watch and change each printed (Ctrl-C stops all, removes all)
fleet: build
	scripts/deps.sh --fleet
	scripts/fleet.py $(ARGS)

## check: a quick check (under two minutes once built): the unit tests and the quick suites of Tests/System/suites.tsv
check:
	scripts/test.sh --quick

## test: every test suite, as CI runs them (about 30 minutes; asan, fuzz and package-test too)
test:
	scripts/test.sh

## asan: the unit and integration tests once more, built with AddressSanitizer (in .build-asan)
asan:
	bash Tests/Build/asan.sh

## fuzz: the request, config and state file fuzzers, 60 s each (FUZZ_SECONDS, FUZZ_TARGETS)
fuzz:
	bash Tests/Build/fuzz.sh

## package-test: the Debian package built, judged by lintian, installed and purged in the systemd lab
package-test:
	bash -c 'source Tests/System/lib/suites.sh && run_bounded "$${PACKAGE_TIMEOUT:-900}" package.py python3 Tests/Build/package.py'

## bench: the benchmarks, as ratios against peers measured in the same run (about 35 minutes, the release build included); ends with perf-report
bench:
	scripts/deps.sh --test
	python3 bench/bench.py
	python3 bench/dbus_bench.py --no-build
	python3 bench/fleet_bench.py --no-build
	python3 bench/report.py

## perf-report: docs/PERFORMANCE.md's summary regenerated from bench/out/*.json (the last make bench)
perf-report:
	python3 bench/report.py

## etcd-lab: three etcd members on loopback on free ports, their URLs printed (Ctrl-C stops them and removes their data)
etcd-lab:
	python3 Tests/System/lib/etcd_lab.py serve

## install: binaries, units, man pages, completions under PREFIX (default /usr/local)
install:
	scripts/deps.sh
	PREFIX=$(PREFIX) DESTDIR=$(DESTDIR) scripts/install.sh

## uninstall: remove what `make install` put (the same PREFIX, DESTDIR); keeps the state and your config
uninstall:
	PREFIX=$(PREFIX) DESTDIR=$(DESTDIR) scripts/install.sh --uninstall

## deb: build/sectiond_VERSION_ARCH.deb (release build, static Swift runtime; VERSION=...)
deb:
	scripts/deps.sh --deb
	scripts/deb.sh

## format: swift format over the sources and tests
format:
	swift format -i -r Sources Tests Package.swift
