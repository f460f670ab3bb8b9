//! A pack's component in the private cache dir (`packs/<sha256>.wasm`):
//! the bytes this hookrt ships, written there once, so a pack loads like
//! any component (compiled once, its artifact cached by its digest).

use std::path::{Path, PathBuf};

use crate::hooks::cache::dir::{create_private_dir, write_private};
use crate::hooks::folder::packs::{PACKS_DIR, Pack};

/// The pack's component in the private cache dir (`packs/<sha256>.wasm`),
/// written there unless the file holds the shipped bytes already.
pub(crate) fn component_file(pack: &Pack, cache_dir: &Path) -> std::io::Result<PathBuf> {
    let dir = cache_dir.join(PACKS_DIR);
    let file = dir.join(format!("{}.wasm", pack.sha256()));
    if std::fs::read(&file).ok().as_deref() != Some(pack.component()) {
        create_private_dir(&dir)?;
        write_private(&file, pack.component())?;
    }
    Ok(file)
}
