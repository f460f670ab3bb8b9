//! Leaves a mark on the host: proof that this build script ran.

fn main() {
    let dir = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    std::fs::write(std::path::Path::new(&dir).join("build-script-ran"), "ran\n")
        .expect("write the mark");
}
