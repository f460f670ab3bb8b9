#!/bin/sh
# Installs hookrt from a release (docs/install.md):
#   curl -fsSL BASE/install.sh | sh
# Picks this machine's archive, downloads it with SHA256SUMS and its
# signature, checks the signature (with ssh-keygen, when it is there) and
# the archive's checksum, and only then puts `hookrt` into
# ${HOOKRT_INSTALL_DIR:-$HOME/.local/bin}. Anything that does not match
# stops it before a file is installed. scripts/dist writes the version and
# the release's public key into this file.
#
# HOOKRT_BASE_URL  where the release's files are (default: the folder this
#                  script was published in, as scripts/dist's --base-url says)
# HOOKRT_INSTALL_DIR  where the binary goes
# HOOKRT_TRUST_KEY  a file holding the public key to check the signature
#                  with, instead of the one written here
# HOOKRT_REQUIRE_SIGNATURE=1  refuse to install when ssh-keygen is missing
set -eu

VERSION='@VERSION@'
RELEASE_KEY='@RELEASE_KEY@'
BASE_URL="${HOOKRT_BASE_URL:-@BASE_URL@}"
INSTALL_DIR="${HOOKRT_INSTALL_DIR:-$HOME/.local/bin}"

say() { printf 'hookrt install: %s\n' "$*" >&2; }
fail() { say "$*"; say "nothing was installed"; exit 1; }

fetch() {
    # fetch URL FILE
    if command -v curl >/dev/null 2>&1; then
        curl -fsSL --proto '=https,http' -o "$2" "$1"
    elif command -v wget >/dev/null 2>&1; then
        wget -q -O "$2" "$1"
    else
        fail "neither curl nor wget is here to download $1"
    fi
}

sha256() {
    if command -v sha256sum >/dev/null 2>&1; then
        sha256sum "$1" | cut -d ' ' -f 1
    elif command -v shasum >/dev/null 2>&1; then
        shasum -a 256 "$1" | cut -d ' ' -f 1
    else
        fail "neither sha256sum nor shasum is here to check the download"
    fi
}

platform() {
    os=$(uname -s)
    arch=$(uname -m)
    case "$arch" in
        x86_64 | amd64) arch=x86_64 ;;
        aarch64 | arm64) arch=aarch64 ;;
    esac
    case "$os" in
        Linux) echo "$arch-unknown-linux-gnu" ;;
        Darwin) echo "$arch-apple-darwin" ;;
        *) echo "$arch-$os" ;;
    esac
}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT INT TERM

target=$(platform)
say "hookrt $VERSION for $target, from $BASE_URL"
fetch "$BASE_URL/SHA256SUMS" "$work/SHA256SUMS" || fail "cannot download $BASE_URL/SHA256SUMS"

# The signature first: a SHA256SUMS nobody signed proves nothing.
if command -v ssh-keygen >/dev/null 2>&1; then
    fetch "$BASE_URL/SHA256SUMS.sig" "$work/SHA256SUMS.sig" || fail "cannot download $BASE_URL/SHA256SUMS.sig"
    if [ -n "${HOOKRT_TRUST_KEY:-}" ]; then
        key=$(cat "$HOOKRT_TRUST_KEY") || fail "cannot read HOOKRT_TRUST_KEY ($HOOKRT_TRUST_KEY)"
    else
        key=$RELEASE_KEY
    fi
    printf 'hookrt-release %s\n' "$key" > "$work/allowed_signers"
    if ! ssh-keygen -Y verify -f "$work/allowed_signers" -I hookrt-release -n hookrt-release \
        -s "$work/SHA256SUMS.sig" < "$work/SHA256SUMS" >/dev/null 2>&1; then
        fail "SHA256SUMS's signature does not match the release key: the release was changed, or it is not hookrt's"
    fi
    say "SHA256SUMS is signed by the release key"
elif [ "${HOOKRT_REQUIRE_SIGNATURE:-0}" = 1 ]; then
    fail "ssh-keygen is not here to check SHA256SUMS's signature, and HOOKRT_REQUIRE_SIGNATURE=1"
else
    say "ssh-keygen is not here: SHA256SUMS's signature is not checked (HOOKRT_REQUIRE_SIGNATURE=1 refuses that)"
fi

archive="hookrt-$VERSION-$target.tar.gz"
expected=$(awk -v f="$archive" '$2 == f || $2 == "*" f { print $1 }' "$work/SHA256SUMS")
if [ -z "$expected" ]; then
    say "there is no archive for $target in this release; there are:"
    awk '$2 ~ /\.tar\.gz$/ { sub(/^\*/, "", $2); print "  " $2 }' "$work/SHA256SUMS" >&2
    fail "build hookrt from source for $target (docs/install.md)"
fi
fetch "$BASE_URL/$archive" "$work/$archive" || fail "cannot download $BASE_URL/$archive"
actual=$(sha256 "$work/$archive")
if [ "$actual" != "$expected" ]; then
    fail "$archive does not match SHA256SUMS (sha256 $actual, expected $expected)"
fi
say "$archive matches SHA256SUMS"

tar -xzf "$work/$archive" -C "$work"
# hookrt, and hookrt-hook, the thin client the agents' hook entries run
# (docs/service.md): each written beside its place and renamed over it, so a
# running resident service sees its binary replaced and retires.
mkdir -p "$INSTALL_DIR"
for name in hookrt-hook hookrt; do
    binary="$work/hookrt-$VERSION-$target/$name"
    [ -f "$binary" ] || fail "$archive holds no hookrt-$VERSION-$target/$name"
done
for name in hookrt-hook hookrt; do
    cp "$work/hookrt-$VERSION-$target/$name" "$INSTALL_DIR/$name.tmp.$$"
    chmod 755 "$INSTALL_DIR/$name.tmp.$$"
    mv -f "$INSTALL_DIR/$name.tmp.$$" "$INSTALL_DIR/$name"
done
say "installed $INSTALL_DIR/hookrt and $INSTALL_DIR/hookrt-hook ($VERSION)"
case ":$PATH:" in
    *":$INSTALL_DIR:"*) ;;
    *) say "$INSTALL_DIR is not on your PATH: add it (export PATH=\"$INSTALL_DIR:\$PATH\")" ;;
esac
say "next: hookrt init my-agent --pack safe-shell,secrets && hookrt install --agent claude-code my-agent"
