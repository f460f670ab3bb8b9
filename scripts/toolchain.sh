# Sourced by the other scripts: makes sure the pinned toolchain and the hook
# target exist (rustup does not auto-install when RUSTUP_AUTO_INSTALL=0).
channel=$(sed -n 's/^channel *= *"\(.*\)"/\1/p' rust-toolchain.toml)
# scripts/test also runs clippy and rustfmt (rust-toolchain.toml lists them).
if ! rustup target list --installed --toolchain "$channel" 2>/dev/null | grep -qx wasm32-wasip2 ||
    ! rustup component list --installed --toolchain "$channel" 2>/dev/null | grep -q '^clippy' ||
    ! rustup component list --installed --toolchain "$channel" 2>/dev/null | grep -q '^rustfmt'; then
    rustup toolchain install "$channel" --profile minimal --target wasm32-wasip2 --component clippy,rustfmt
fi
# The example agent has a TypeScript hook: the pinned JS toolchain (npm,
# Node.js 20+) is installed once per user, and every hookrt and test process
# started from here is pointed at it, whatever its HOME or cache dir.
HOOKRT_JS_TOOLCHAIN=$(scripts/js-toolchain)
export HOOKRT_JS_TOOLCHAIN
# Likewise its Python hook: the pinned Python toolchain (componentize-py in a
# virtual environment; python3 3.10+ with venv and pip).
HOOKRT_PY_TOOLCHAIN=$(scripts/py-toolchain)
export HOOKRT_PY_TOOLCHAIN
# The `notify` tests start a private D-Bus session bus: Debian's
# dbus-daemon, pinned (scripts/dbus installs it when missing).
scripts/dbus
# hookrt-hook, the thin client an agent starts per event, linked statically
# (glibc static-pie) into target/release/hookrt-hook: it starts about 0.3 ms
# sooner than the dynamically linked one `cargo build` makes, which the next
# `cargo build` links back. scripts/bench service measures both; the releases
# ship the dynamic one (ADR 0012: a static glibc is LGPL object code to
# offer for relinking).
static_thin_client() {
    cargo rustc --release -p hookrt-cli --bin hookrt-hook "$@" -- -C target-feature=+crt-static
}
