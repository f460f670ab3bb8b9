//! Test hook: owns every file edit and fails it.

use hookrt_sdk::prelude::*;

#[derive(Default)]
pub struct FileRejecter;

impl FileRejecter {
    fn edit(&mut self, _event: &Event, _cx: &Context) -> HookResult<FileEditAnswer> {
        Ok(FileEditAnswer::failed("rejected by file_rejecter"))
    }
}

hookrt_sdk::define_hook!(FileRejecter {
    "file.edit.requested" => edit,
});
