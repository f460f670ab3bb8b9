//! The `log` grant (held by default): structured log lines into the
//! delivery's output budget, shared with stdout and stderr (`capture.rs`).

use wasmtime::component::{HasSelf, Linker};

use super::{Grant, no_table};
use crate::sandbox::host::StoreData;
use crate::sandbox::wit::{Field, Level, v0_1_0, v0_2_0, v0_3_0, v0_4_0};

/// The `log` grant.
pub(crate) const GRANT: Grant = Grant {
    name: "log",
    interfaces: &["hookrt:hook/log"],
    gives: "log lines, within the delivery's output_bytes",
    default: true,
    needs_lock: false,
    table: no_table,
    link,
    needs_project: false,
    resolve: None,
};

fn link(l: &mut Linker<StoreData>) -> wasmtime::Result<()> {
    v0_4_0::hookrt::hook::log::add_to_linker::<_, HasSelf<_>>(l, |s| s)?;
    v0_3_0::hookrt::hook::log::add_to_linker::<_, HasSelf<_>>(l, |s| s)?;
    v0_2_0::hookrt::hook::log::add_to_linker::<_, HasSelf<_>>(l, |s| s)?;
    v0_1_0::hookrt::hook::log::add_to_linker::<_, HasSelf<_>>(l, |s| s)
}

impl v0_4_0::hookrt::hook::log::Host for StoreData {
    fn log(&mut self, level: Level, message: String, fields: Vec<Field>) {
        self.capture.log(
            level,
            message,
            fields.into_iter().map(|f| (f.key, f.value)).collect(),
        );
    }
}

/// One older world's `log` host: its level read up, its fields as they are.
macro_rules! older_log {
    ($v:ident) => {
        impl $v::hookrt::hook::log::Host for StoreData {
            fn log(
                &mut self,
                level: $v::hookrt::hook::log::Level,
                message: String,
                fields: Vec<$v::hookrt::hook::log::Field>,
            ) {
                self.capture.log(
                    $v::level_up(level),
                    message,
                    fields.into_iter().map(|f| (f.key, f.value)).collect(),
                );
            }
        }
    };
}

older_log!(v0_3_0);
older_log!(v0_2_0);
older_log!(v0_1_0);
