#!/usr/bin/env bash
# The whole test suite: formatting, lints, unit, integration and differential tests.
# Differential tests compare with the installed fio; set IOBENCH_REQUIRE_FIO=1 to make a
# missing fio a failure instead of a skip (CI does).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo fmt --all -- --check
# One feature set for the lints, the docs and the suite: with Open MPI (CI installs it)
# that is `--features mpi`, so one optimised build serves the whole suite and the mpirun
# tests (tests/cluster_mpi.rs); the MSRV check below builds the default features with
# warnings as errors, so the build without `mpi` stays clean too. A machine without
# mpirun tests the default features (and fails under IOBENCH_REQUIRE_FIO=1, as CI sets).
features=()
if command -v mpirun >/dev/null || [ "${IOBENCH_REQUIRE_FIO:-}" = 1 ]; then
    features=(--features mpi)
else
    echo "scripts/test.sh: mpirun not found: the MPI build and its tests are left out" >&2
fi
cargo clippy --all-targets "${features[@]}" -- -D warnings
# The API docs build without a warning (broken links, unclosed tags).
RUSTDOCFLAGS="-D warnings" cargo doc --no-deps --quiet "${features[@]}"
# The MSRV (Cargo.toml's rust-version) still builds with the locked dependencies: a newer
# std API or a dependency needing a newer Rust fails here. On CI's 2 cores installing the
# toolchain took 24 s and a cold check 78 s (target/msrv keeps later checks incremental).
# A machine that cannot download the toolchain says so and goes on (the check is about
# the Rust version, not about iobench's behaviour).
if command -v rustup >/dev/null && rustup toolchain install 1.82 --profile minimal; then
    RUSTFLAGS="-D warnings" CARGO_TARGET_DIR=target/msrv cargo +1.82 check --all-targets --locked
else
    echo "scripts/test.sh: WARNING: no Rust 1.82 toolchain: the MSRV check did not run" >&2
fi
# The suite profile (Cargo.toml) is release without LTO: the same optimised code, built
# in a third of the time. The binaries then run in two lanes (see scripts/test-lanes.sh).
cargo test --profile suite --no-run "${features[@]}"
bash scripts/test-lanes.sh "${features[@]}"
