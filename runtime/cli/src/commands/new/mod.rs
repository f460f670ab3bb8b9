//! `hookrt new DIR/hooks/SLUG [--lang rust|ts|py]`: a working hook from a
//! template, one handler per `--events` subscription, in the language asked;
//! or, with `--template`, a hook for a common case with its grant
//! (`notify.rs`).

mod notify;
mod py;
mod rust;
mod scaffold;
mod ts;

use std::process::ExitCode;

use anyhow::{Result, bail};

use crate::loading::Loading;

pub(super) use scaffold::NewArgs;

impl NewArgs {
    pub(crate) fn execute(self, loading: Loading) -> Result<ExitCode> {
        if let Some(template) = &self.template {
            match template.as_str() {
                "notify" => notify::new(&self)?,
                other => bail!("--template {other}: unknown template; use `notify`"),
            }
            return Ok(ExitCode::SUCCESS);
        }
        match self.lang.as_str() {
            "rust" | "rs" => rust::new(&self, loading)?,
            "ts" | "typescript" | "js" | "javascript" => ts::new(&self)?,
            "py" | "python" => py::new(&self)?,
            other => bail!("--lang {other}: unknown language; use `rust`, `ts` or `py`"),
        }
        Ok(ExitCode::SUCCESS)
    }
}
