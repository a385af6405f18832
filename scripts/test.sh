#!/usr/bin/env bash
# The whole test suite: formatting, lints, unit, integration and differential tests.
# Differential tests compare with the installed fio; set IOBENCH_REQUIRE_FIO=1 to make a
# missing fio a failure instead of a skip (CI does).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo fmt --all -- --check
cargo clippy --all-targets -- -D warnings
cargo build --release
cargo test --release -- --test-threads=2
