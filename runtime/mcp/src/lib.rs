//! hookrt as an MCP interceptor server: the agent folder's hooks, offered
//! to an MCP host or gateway as interceptors of `tools/call` after
//! SEP-2624, "Interceptors for Model Context Protocol" (**a draft**: the
//! revision of 2026-07-17, formerly SEP-1763; its method names and shapes
//! may change before it is merged), over stdio (`hookrt mcp DIR`) or
//! streamable HTTP (`hookrt serve`'s `/mcp`), with rmcp, the official MCP
//! Rust SDK.
//!
//! - [`interceptors`]: the two interceptors offered (`hookrt`, a validator
//!   of requests and responses; `hookrt-rewrite`, a mutator of requests)
//!   and `interceptors/list`;
//! - [`invoke`]: one `interceptor/invoke`, read, handed to the hooks as the
//!   `mcp` protocol's input (`hookrt::front::bridge::mcp`), and answered as
//!   a validation or mutation result;
//! - [`server`]: the MCP server (`initialize` advertises the interceptors
//!   extension), over stdio or as a tower service for streamable HTTP.
//!
//! Decisions go through [`hookrt::front::decide`] with any `Resolver`: the
//! service of `hookrt serve` (one journal for every agent) or `hookrt mcp`'s.

pub mod interceptors;
pub mod invoke;
pub mod server;

pub use interceptors::Mode;
pub use server::{HttpService, Interceptors, http_service, serve_stdio};
