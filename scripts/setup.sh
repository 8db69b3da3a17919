#!/usr/bin/env bash
# Installs what building and testing crfix needs on a Linux machine that has Rust (rustup):
# the wasm32-wasip1 target, rustfmt and clippy. Idempotent: a second run changes nothing.
set -euo pipefail

die() {
  echo "setup: error: $*" >&2
  exit 1
}

command -v cargo >/dev/null 2>&1 ||
  die "cargo not found. Install Rust with rustup (https://rustup.rs), then open a new shell or run: source \"\$HOME/.cargo/env\""

if command -v rustup >/dev/null 2>&1; then
  if ! rustup target list --installed | grep -qx wasm32-wasip1; then
    echo "setup: adding the wasm32-wasip1 target"
    rustup target add wasm32-wasip1 || die "rustup could not add the wasm32-wasip1 target"
  fi
  for component in rustfmt clippy; do
    if ! rustup component list --installed | grep -q "^${component}"; then
      echo "setup: adding the ${component} component"
      rustup component add "${component}" || die "rustup could not add ${component}"
    fi
  done
else
  # Without rustup (e.g. a distribution's Rust), check instead of installing.
  libdir="$(rustc --print target-libdir --target wasm32-wasip1 2>/dev/null || true)"
  [ -n "$libdir" ] && [ -d "$libdir" ] ||
    die "the wasm32-wasip1 Rust target is missing and rustup is not installed; install rustup (https://rustup.rs) or your distribution's wasm32-wasip1 standard library"
  cargo fmt --version >/dev/null 2>&1 || die "rustfmt is missing (install rustup, or your distribution's rustfmt)"
  cargo clippy --version >/dev/null 2>&1 || die "clippy is missing (install rustup, or your distribution's clippy)"
fi

echo "setup: ok ($(rustc --version), targets: $(rustup target list --installed 2>/dev/null | tr '\n' ' '))"
