//! `hookrt new DIR/hooks/SLUG [--lang rust|ts|py]`: a working hook from a
//! template, one handler per `--events` subscription, in the language asked;
//! or, with `--template`, a hook for a common case and its grants
//! (`recipe.rs`). Each adds the hook's entry to `hookrt.toml` (`entry.rs`).

mod entry;
mod py;
mod recipe;
mod rust;
mod scaffold;
mod ts;

use std::process::ExitCode;

use anyhow::{Result, bail};

use crate::loading::Loading;

pub(super) use scaffold::NewArgs;

impl NewArgs {
    pub(crate) fn execute(self, loading: Loading) -> Result<ExitCode> {
        if let Some(recipe) = self.template {
            recipe::new(&self, recipe)?;
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
