#!/usr/bin/env bash
# Builds receiptflow in release mode and copies it to PREFIX/bin (default: ~/.local, so ~/.local/bin/receiptflow).
#   bash scripts/install.sh [PREFIX]
# Apple's root certificates are built in; nothing else needs installing. Remove it with rm PREFIX/bin/receiptflow.
set -euo pipefail
cd "$(dirname "$0")/.."
prefix="${1:-$HOME/.local}"

missing=()
[ -f /usr/include/openssl/evp.h ] || missing+=(libssl-dev)
[ -f /usr/include/zstd.h ] || missing+=(libzstd-dev)
[ -f /usr/include/zlib.h ] || missing+=(zlib1g-dev)
if [ ${#missing[@]} -gt 0 ]; then
    echo "install: missing system libraries; install them first:  sudo apt-get install -y ${missing[*]}" >&2
    exit 1
fi

swift build -c release --product receiptflow >&2
bin="$(swift build -c release --show-bin-path)/receiptflow"
mkdir -p "$prefix/bin"
install -m 0755 "$bin" "$prefix/bin/receiptflow"
echo "installed $prefix/bin/receiptflow ($("$prefix/bin/receiptflow" --version))"
case ":$PATH:" in
    *":$prefix/bin:"*) ;;
    *) echo "note: $prefix/bin is not on PATH; add it:  export PATH=\"$prefix/bin:\$PATH\"" ;;
esac
