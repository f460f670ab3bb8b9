//! The cache dir, per user and outside the agent folder: private files and
//! the cache's key (`dir`), stamps that let a load trust a file it verified
//! before (`stamp`), components precompiled for this engine (`artifact`),
//! Cranelift's functions compiled before (`incremental`) and the
//! subscriptions a hook reported when it last started (`start`).

pub(crate) mod artifact;
pub(crate) mod dir;
pub(crate) mod incremental;
pub(crate) mod stamp;
pub(crate) mod start;
