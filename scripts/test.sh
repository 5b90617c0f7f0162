#!/usr/bin/env bash
# The README's test command. First checks what the build and the tests need and stops within seconds with the fix
# when something is missing (the Python reader packages it installs itself when pip can); then every Swift test
# target in one (debug) build, then the Python checks on the binary of that build: the readers, the history, the
# samples against their truth, every command of README.md and data/README.md, the Spark driver's task side.
# A few minutes on two cores, builds included.
#   bash scripts/test.sh                    every module, as above
#   bash scripts/test.sh --full             also what takes longer, as CI runs it (.ci/run): the Swift tests in a
#                                           second, release build, and the Python checks that run Spark (Java 17)
#   bash scripts/test.sh --filter NAME      only the Swift tests matching NAME, no Python checks (with --full
#                                           first: in release too)
#   bash scripts/test.sh --force            even when nothing changed since the last passing run (with --full too)
# Sanitizers, fuzzing and the benchmarks have their own scripts (scripts/sanitizers.sh, fuzz.sh, bench.sh), which
# CI runs after this one.
# A second run with nothing changed rebuilds nothing: the release tests build in their own folder
# (.build-release-tests, with the testing flags), so they never invalidate the plain release build that
# scripts/demo.sh, scripts/install.sh and scripts/bench.sh make in .build. In a git checkout, a run that passed
# records a hash of every file git sees and of the toolchain; when nothing differs, the next run of the same kind
# says so and stops, as a build system does with a passed test whose inputs are unchanged.
set -euo pipefail
cd "$(dirname "$0")/.."

# --- Options ------------------------------------------------------------------------------------------------------
full=0
force=0
while [ $# -gt 0 ]; do
    case "$1" in
        --full) full=1; shift ;;
        --force) force=1; shift ;;
        *) break ;;
    esac
done

# --- What the tests need ----------------------------------------------------------------------------------------
missing=()
[ -f /usr/include/openssl/evp.h ] || missing+=(libssl-dev)
[ -f /usr/include/zstd.h ] || missing+=(libzstd-dev)
[ -f /usr/include/zlib.h ] || missing+=(zlib1g-dev)
command -v openssl >/dev/null || missing+=(openssl)  # an independent judge of the receipts the generator signs
command -v zstd >/dev/null || missing+=(zstd)        # compressed inputs in the Python checks
[ -x /usr/bin/time ] || missing+=(time)              # peak memory of the hostile-input tests
if [ "$full" = 1 ]; then  # Spark
    command -v java >/dev/null || [ -x "${JAVA_HOME:-/nonexistent}/bin/java" ] || missing+=(openjdk-17-jre-headless)
fi
command -v chromium >/dev/null || missing+=(chromium)  # renders the HTML report (Tests/python/test_report.py)
if [ ${#missing[@]} -gt 0 ]; then
    echo "test: missing system packages; install them first:" >&2
    echo "  sudo apt-get install -y ${missing[*]}" >&2
    exit 1
fi
command -v swift >/dev/null || { echo "test: swift is not on PATH (Swift 6: https://www.swift.org/install/)" >&2; exit 1; }
command -v python3 >/dev/null || { echo "test: python3 is missing:  sudo apt-get install -y python3 python3-pip" >&2; exit 1; }

# The Python checks' packages (Tests/python/requirements.txt; PySpark only with --full), installed when any is
# missing.
requirements="$(sed 's/#.*//; s/ *$//' Tests/python/requirements.txt | grep -v '^$' || true)"
[ "$full" = 1 ] || requirements="$(echo "$requirements" | grep -v '^pyspark$' || true)"
python_ready() {
    REQUIREMENTS="$requirements" python3 - <<'EOF' 2>/dev/null
import importlib.util, os, sys
modules = {"pillow": "PIL"}  # packages whose module has another name
missing = [w for w in os.environ["REQUIREMENTS"].split() if importlib.util.find_spec(modules.get(w, w)) is None]
if missing:
    print("test: Python packages missing: " + " ".join(missing), file=sys.stderr)
    sys.exit(1)
EOF
}
if ! python_ready; then
    echo "test: installing them:  python3 -m pip install" $requirements >&2
    # shellcheck disable=SC2086
    if ! python3 -m pip install -q --disable-pip-version-check $requirements; then
        echo "test: pip could not install the Python packages. Install pip (sudo apt-get install -y python3-pip)" >&2
        echo "      or use a virtual environment, then:  python3 -m pip install -r Tests/python/requirements.txt" >&2
        exit 1
    fi
    python_ready || exit 1
fi

# --- Nothing changed since the last passing run ------------------------------------------------------------------
stamp=.build/test-passed
[ "$full" = 0 ] || stamp=.build/test-passed-full
fingerprint=""
if [ $# -eq 0 ] && git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    fingerprint="$({
        swift --version 2>&1 || true
        python3 --version 2>&1 || true
        git ls-files -z --cached --others --exclude-standard | sort -z | xargs -0 -r sha256sum 2>&1 || true
    } | sha256sum | cut -d' ' -f1)"
    if [ "$force" = 0 ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$fingerprint" ]; then
        echo "test: nothing changed since the last passing run of these tests (stamp $stamp); run" \
            "\`bash scripts/test.sh $([ "$full" = 1 ] && echo "--full ")--force\` to run them again"
        exit 0
    fi
fi

# --- Swift tests -------------------------------------------------------------------------------------------------
# Every test target, debug build.
swift build --build-tests
swift test --skip-build "$@"
# --full: the release build too; the parser must hold its bounds without debug checks.
# `swift test` (not `swift build --build-tests`, which cannot enable testable imports in release) builds them.
release=(-c release --scratch-path .build-release-tests)
[ "$full" = 0 ] || swift test "${release[@]}" "$@"
[ $# -eq 0 ] || exit 0

# --- Python checks, on the binary the tests just built -----------------------------------------------------------
# The output writers' harness (a test-only executable) comes from the debug build above: building it in the release
# scratch path without testable imports would invalidate the release tests' build.
debug_bin="$(swift build --show-bin-path)"
bin="$debug_bin/receiptflow"
[ "$full" = 0 ] || bin="$(swift build "${release[@]}" --show-bin-path)/receiptflow"
spark=()
[ "$full" = 1 ] || spark=(-m "not spark")
RECEIPTFLOW_BIN="$bin" RECEIPTFLOW_SINKS_BIN="$debug_bin/SinkHarness" python3 -m pytest -q Tests/python "${spark[@]}"
# Every test passed: a second run with nothing changed can say so without running them again.
if [ -n "$fingerprint" ]; then
    mkdir -p .build
    echo "$fingerprint" > "$stamp"
fi
