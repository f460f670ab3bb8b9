//! `hookrt keygen --out FILE`: the Ed25519 key that signs the journal's
//! trail (`--signing-key`); and reading the public key a `--key FILE` names.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Result;

/// Arguments of `hookrt keygen`.
#[derive(clap::Args)]
pub(crate) struct KeygenArgs {
    /// Where to write the secret key; FILE.pub gets the public key.
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,
}

impl KeygenArgs {
    pub(crate) fn execute(self) -> Result<ExitCode> {
        keygen(&self.out)
    }
}

/// The public key `--key FILE` names, read (`hookrt keygen` wrote it).
pub(crate) fn read_key(path: Option<&Path>) -> Result<Option<hookrt::journal::VerifyingKey>> {
    path.map(hookrt::journal::read_verifying_key)
        .transpose()
        .map_err(anyhow::Error::msg)
}

/// `hookrt keygen --out FILE`: a new signing key in FILE (owner-only, never
/// overwritten) and its public key in FILE.pub.
fn keygen(out: &Path) -> Result<ExitCode> {
    use std::os::unix::fs::OpenOptionsExt;
    let key = hookrt::journal::generate_key()?;
    let public = hookrt::journal::public_hex(&key);
    let mut secret = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(out)
        .map_err(|e| {
            anyhow::anyhow!(
                "cannot create {} (an existing key is never overwritten): {e}",
                out.display()
            )
        })?;
    writeln!(secret, "{}", hex::encode(key.to_bytes()))?;
    secret.sync_all()?;
    let pub_path = PathBuf::from(format!("{}.pub", out.display()));
    std::fs::write(&pub_path, format!("{public}\n"))
        .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", pub_path.display()))?;
    println!(
        "{}: signing key (keep it outside the agent folder and the journal's folder); {}: public key {public}",
        out.display(),
        pub_path.display()
    );
    Ok(ExitCode::SUCCESS)
}
