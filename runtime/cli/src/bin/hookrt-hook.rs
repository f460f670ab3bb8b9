//! `hookrt-hook`: the command hook as a thin client of the folder's
//! resident service (`hookrt_client::thin`; docs/service.md).

fn main() -> std::process::ExitCode {
    hookrt_client::thin::main()
}
