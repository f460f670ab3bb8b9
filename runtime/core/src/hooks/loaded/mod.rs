//! Hooks in the sandbox: a component loaded and checked against its grants
//! (`load`), each grant it holds resolved for this host (`granted`), one delivery's call into it under its limits (`call`), the pins
//! of `hookrt.lock` (`lock`), and the registry that orders loaded hooks and
//! plans which handlers an event reaches (`registry`).

pub(crate) mod call;
pub(crate) mod granted;
pub(crate) mod load;
pub(crate) mod lock;
pub(crate) mod registry;
