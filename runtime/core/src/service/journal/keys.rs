//! The keys that sign the trail's checkpoints and the receipts: made from
//! the system's randomness, read from their files (64 hex digits each, as
//! `hookrt keygen` writes them), and named by their public half.

use std::path::{Path, PathBuf};

use ed25519_dalek::{SigningKey, VerifyingKey};

/// Why a key file gave no key.
#[derive(Debug, thiserror::Error)]
pub enum KeyError {
    /// The file could not be read.
    #[error("cannot read the {what} {}: {source}", path.display())]
    Read {
        /// `signing key` or `public key`.
        what: &'static str,
        /// The file.
        path: PathBuf,
        /// Why it could not be read.
        source: std::io::Error,
    },
    /// The file holds no signing key.
    #[error("{} is not a hookrt signing key (64 hex digits; `hookrt keygen` makes one)", path.display())]
    NotSigningKey {
        /// The file.
        path: PathBuf,
    },
    /// The file holds no public key.
    #[error("{} is not a hookrt public key (64 hex digits; `hookrt keygen` writes one beside the signing key)", path.display())]
    NotPublicKey {
        /// The file.
        path: PathBuf,
    },
}

/// A new signing key, from the system's randomness.
pub fn generate_key() -> std::io::Result<SigningKey> {
    let mut seed = [0u8; 32];
    getrandom::fill(&mut seed).map_err(std::io::Error::other)?;
    Ok(SigningKey::from_bytes(&seed))
}

/// Reads a signing key file (64 hex digits of its seed).
pub fn read_signing_key(path: &Path) -> Result<SigningKey, KeyError> {
    let text = std::fs::read_to_string(path).map_err(|source| KeyError::Read {
        what: "signing key",
        path: path.to_path_buf(),
        source,
    })?;
    let seed: [u8; 32] = hex::decode(text.trim())
        .ok()
        .and_then(|b| b.try_into().ok())
        .ok_or_else(|| KeyError::NotSigningKey {
            path: path.to_path_buf(),
        })?;
    Ok(SigningKey::from_bytes(&seed))
}

/// Reads a verifying (public) key file (64 hex digits).
pub fn read_verifying_key(path: &Path) -> Result<VerifyingKey, KeyError> {
    let text = std::fs::read_to_string(path).map_err(|source| KeyError::Read {
        what: "public key",
        path: path.to_path_buf(),
        source,
    })?;
    hex::decode(text.trim())
        .ok()
        .and_then(|b| <[u8; 32]>::try_from(b).ok())
        .and_then(|b| VerifyingKey::from_bytes(&b).ok())
        .ok_or_else(|| KeyError::NotPublicKey {
            path: path.to_path_buf(),
        })
}

/// A signing key's public half, in hex: how checkpoints and receipts name
/// the key that signed them.
pub fn public_hex(key: &SigningKey) -> String {
    hex::encode(key.verifying_key().as_bytes())
}
