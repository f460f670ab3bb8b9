//! The cache dir, per user and outside the agent folder: private files and
//! the cache's key (`dir`), stamps that let a load trust a file it verified
//! before (`stamp`), components precompiled for this engine (`artifact`),
//! Cranelift's functions compiled before (`incremental`), the
//! subscriptions a hook reported when it last started (`start`) and the
//! packs' components as this hookrt ships them (`pack`).

pub(crate) mod artifact;
pub(crate) mod dir;
pub(crate) mod incremental;
pub(crate) mod pack;
pub(crate) mod stamp;
pub(crate) mod start;
