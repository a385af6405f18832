#!/usr/bin/env bash
# Runs every cargo-fuzz target in fuzz/ for a bounded time (FUZZ_SECONDS, default 5 s
# each); a crash, panic or timeout fails the script. Builds the targets the way cargo-fuzz
# does (SanitizerCoverage instrumentation, libFuzzer linked by libfuzzer-sys, cfg fuzzing)
# with plain cargo, so no cargo-fuzz install and no nightly toolchain are needed.
# Corpora and crash artifacts go under the target dir (never committed).
set -euo pipefail
cd "$(dirname "$0")/.."
SECS="${FUZZ_SECONDS:-5}"
TARGET_DIR="${FUZZ_TARGET_DIR:-$PWD/target/fuzz}"
TARGETS=(jobfile value cmdline fioproto iolog nbd_reply server_msg metrics_request report_input result_json http_response)
export RUSTFLAGS="-Cpasses=sancov-module -Cllvm-args=-sanitizer-coverage-level=4 \
-Cllvm-args=-sanitizer-coverage-inline-8bit-counters -Cllvm-args=-sanitizer-coverage-pc-table \
-Cllvm-args=-sanitizer-coverage-trace-compares --cfg fuzzing -Cdebug-assertions -Coverflow-checks"
# An explicit --target keeps RUSTFLAGS off build scripts (as cargo-fuzz does).
HOST="$(rustc -vV | sed -n 's/^host: //p')"
cargo build --manifest-path fuzz/Cargo.toml --target-dir "$TARGET_DIR" --release \
    --target "$HOST" --bins -q
for t in "${TARGETS[@]}"; do
    corpus="$TARGET_DIR/corpus/$t"
    artifacts="$TARGET_DIR/artifacts/$t/"
    mkdir -p "$corpus" "$artifacts"
    echo "fuzz: $t for ${SECS}s"
    "$TARGET_DIR/$HOST/release/$t" "$corpus" -max_total_time="$SECS" -timeout=10 \
        -rss_limit_mb=2048 -artifact_prefix="$artifacts" -print_final_stats=0 \
        2>"$TARGET_DIR/$t.log" || {
        tail -40 "$TARGET_DIR/$t.log"
        echo "fuzz: $t failed (artifacts in $artifacts)"
        exit 1
    }
    grep -E "^#[0-9]+.*DONE" "$TARGET_DIR/$t.log" | tail -1 || true
done
