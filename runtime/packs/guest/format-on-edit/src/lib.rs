//! The `format-on-edit` pack's component: after a call that wrote a file
//! ended well, the formatter `[packs.format-on-edit]` names for its
//! extension runs on it through the `exec` grant
//! (`hookrt_pack_rules::format_on_edit`, docs/packs/format-on-edit.md).

use hookrt_pack_rules::format_on_edit::{Settings, extension, program_of, written_file};
use hookrt_sdk::prelude::*;

#[derive(Default)]
pub struct FormatOnEdit {
    settings: Option<Settings>,
}

#[hookrt_sdk::hook]
impl Hook for FormatOnEdit {
    type Config = Settings;

    fn configure(&mut self, config: Settings) -> HookResult {
        config.check().map_err(|e| HookError::new(e.message))?;
        self.settings = Some(config);
        Ok(())
    }

    fn action_result(&mut self, data: ActionResult, event: &Event, _cx: &Context) -> HookResult {
        let settings = self
            .settings
            .as_ref()
            .ok_or_else(|| HookError::new("format-on-edit was not configured"))?;
        if data.status != ActionStatus::Ok {
            return Ok(());
        }
        let json = event.data_json()?;
        let Some(file) = written_file(&data.tool, json.get("input"), data.output.as_ref()) else {
            return Ok(());
        };
        let Some(ext) = extension(&file).filter(|e| settings.formatters.contains_key(e)) else {
            return Ok(());
        };
        let ran = exec::run(&program_of(&ext), &[("file", &file)])?;
        if ran.success() {
            log::info("formatted", &[("file", &file)]);
        } else {
            let stderr = String::from_utf8_lossy(&ran.stderr);
            log::warn("the formatter failed", &[("file", &file), ("stderr", &stderr)]);
        }
        Ok(())
    }
}
