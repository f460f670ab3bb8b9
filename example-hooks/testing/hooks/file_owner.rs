//! Test hook: claims every file edit as applied (it writes nothing).

use hookrt_sdk::prelude::*;

#[derive(Default)]
pub struct FileOwner;

impl FileOwner {
    fn edit(&mut self, _event: &Event, _cx: &Context) -> HookResult<FileEditAnswer> {
        Ok(FileEditAnswer::Applied)
    }
}

hookrt_sdk::define_hook!(FileOwner {
    "file.edit.requested" => edit,
});
