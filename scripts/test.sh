#!/usr/bin/env bash
# The whole test suite: formatting, lints, unit, integration and differential tests.
# Differential tests compare with the installed fio; set IOBENCH_REQUIRE_FIO=1 to make a
# missing fio a failure instead of a skip (CI does).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo fmt --all -- --check
cargo clippy --all-targets -- -D warnings
# The API docs build without a warning (broken links, unclosed tags).
RUSTDOCFLAGS="-D warnings" cargo doc --no-deps --quiet
# The MSRV (Cargo.toml's rust-version) still builds with the locked dependencies: a newer
# std API or a dependency needing a newer Rust fails here. On CI's 2 cores installing the
# toolchain took 24 s and a cold check 78 s (target/msrv keeps later checks incremental).
# A machine that cannot download the toolchain says so and goes on (the check is about
# the Rust version, not about iobench's behaviour).
if command -v rustup >/dev/null && rustup toolchain install 1.82 --profile minimal; then
    CARGO_TARGET_DIR=target/msrv cargo +1.82 check --all-targets --locked
else
    echo "scripts/test.sh: WARNING: no Rust 1.82 toolchain: the MSRV check did not run" >&2
fi
# The suite profile (Cargo.toml) is release without LTO: the same optimised code, built
# in a third of the time.
cargo test --profile suite --no-fail-fast -- --test-threads=2
# The MPI build (cargo feature `mpi`, needing Open MPI and libclang): its lints and its
# mpirun tests (tests/cluster_mpi.rs). CI installs both; elsewhere a machine without
# mpirun skips this part unless IOBENCH_REQUIRE_FIO=1.
if command -v mpirun >/dev/null || [ "${IOBENCH_REQUIRE_FIO:-}" = 1 ]; then
    cargo clippy --all-targets --features mpi -- -D warnings
    cargo test --profile suite --features mpi --test cluster_mpi -- --test-threads=2
else
    echo "scripts/test.sh: mpirun not found: skipping the MPI build's tests" >&2
fi
