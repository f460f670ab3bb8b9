//! What a JSON text costs once parsed, known before it is parsed.
//!
//! A parsed JSON value takes far more memory than its text when the text is
//! dense: `0,` is two bytes and a 32-byte value in a vector that may hold
//! twice its length; `{"a":0}` is seven bytes and a 640-byte tree node. A
//! body of such items costs the server 20 to 90 times its size. [`parsed`]
//! reads the text once, counting what each value allocates, and says how
//! much parsing it would take at most, so the budget (`budget.rs`) is
//! charged before anything is parsed and a caller cannot make a small body
//! cost much.

/// Each value's place in its array or object: a `serde_json::Value` is 32
/// bytes, and a vector grown by pushing may hold twice its length.
const SLOT: usize = 64;
/// An array's first allocation: room for four values.
const ARRAY: usize = 128;
/// A string's own allocation, at least (the allocator's smallest block),
/// besides its bytes.
const STRING: usize = 32;
/// An object's map: the first B-tree node (11 keys and values).
const OBJECT: usize = 640;
/// Each key's share of the further nodes a large map grows (a node is at
/// least half full).
const ENTRY: usize = 160;

/// At most the bytes that parsing `text` as JSON into values (and keeping
/// the text of the event's data beside them, as an envelope does) holds at
/// its peak.
/// Reads `text` once; invalid JSON is estimated all the same (its parse
/// fails early, costing less).
pub fn parsed(text: &[u8]) -> usize {
    let (mut opens, mut objects, mut commas, mut colons) = (0usize, 0usize, 0usize, 0usize);
    let (mut strings, mut string_bytes) = (0usize, 0usize);
    let mut in_string = false;
    let mut escaped = false;
    for &b in text {
        if in_string {
            string_bytes += 1;
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => {
                in_string = true;
                strings += 1;
            }
            b'{' => objects += 1,
            b'[' => opens += 1,
            b',' => commas += 1,
            b':' => colons += 1,
            _ => {}
        }
    }
    // Every value begins a container, follows a comma or a colon, or is
    // the first: so there are at most this many.
    let values = opens + objects + commas + colons + 1;
    // The text of the data is kept beside its values, and copied once on
    // the way (boxed, then shared); each string's bytes are copied into
    // its value, and may pass through a scratch buffer first.
    2 * text.len()
        + 2 * string_bytes
        + SLOT * values
        + ARRAY * opens
        + STRING * strings
        + OBJECT * objects
        + ENTRY * colons
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::alloc::{GlobalAlloc, Layout, System};
    use std::cell::Cell;

    /// Counts what this thread allocates and frees, so a test can see what
    /// a parse keeps (tests run on threads of their own).
    pub(crate) struct Counting;

    thread_local! {
        static LIVE: Cell<isize> = const { Cell::new(0) };
        static PEAK: Cell<isize> = const { Cell::new(0) };
    }

    // SAFETY: forwards to the system allocator; the counts are plain
    // thread-local cells that never allocate.
    unsafe impl GlobalAlloc for Counting {
        unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
            count(layout.size() as isize);
            unsafe { System.alloc(layout) }
        }
        unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
            count(-(layout.size() as isize));
            unsafe { System.dealloc(ptr, layout) }
        }
        unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new: usize) -> *mut u8 {
            count(new as isize - layout.size() as isize);
            unsafe { System.realloc(ptr, layout, new) }
        }
    }

    fn count(delta: isize) {
        let _ = LIVE.try_with(|live| {
            live.set(live.get() + delta);
            let _ = PEAK.try_with(|peak| peak.set(peak.get().max(live.get())));
        });
    }

    /// The bytes `f` allocated at its peak, above what was live before it.
    fn peak_of<T>(f: impl FnOnce() -> T) -> (usize, T) {
        let before = LIVE.with(Cell::get);
        PEAK.with(|p| p.set(before));
        let out = f();
        let peak = PEAK.with(Cell::get) - before;
        (peak.max(0) as usize, out)
    }

    /// An envelope whose data is `data`.
    fn envelope(data: &str) -> String {
        format!(
            r#"{{"schema_version":1,"id":"evt_dense","kind":"message.completed","timestamp":"2026-11-30T09:00:00Z","coordinates":{{"agent":"coder","session":"ses_1","turn":"turn_1","step":"turn_1.step_1","sequence":1,"subagent":null}},"data":{data}}}"#
        )
    }

    #[test]
    fn the_estimate_is_at_least_what_parsing_an_envelope_takes_at_its_peak() {
        let n = 20_000;
        let shapes = [
            ("numbers", format!("{{\"v\":[{}0]}}", "0,".repeat(n))),
            (
                "small objects",
                format!("{{\"v\":[{}{{}}]}}", "{\"a\":0},".repeat(n)),
            ),
            ("empty arrays", format!("{{\"v\":[{}[]]}}", "[],".repeat(n))),
            (
                "short strings",
                format!("{{\"v\":[{}\"\"]}}", "\"x\",".repeat(n)),
            ),
            (
                "a wide object",
                format!(
                    "{{{}\"end\":0}}",
                    (0..n).map(|i| format!("\"k{i}\":0,")).collect::<String>()
                ),
            ),
            (
                "deep nesting",
                format!("{{\"v\":{}0{}}}", "[".repeat(120), "]".repeat(120)),
            ),
            (
                "one long string",
                format!("{{\"v\":\"{}\"}}", "x".repeat(n * 8)),
            ),
        ];
        for (what, data) in shapes {
            let text = envelope(&data);
            let estimate = parsed(text.as_bytes());
            let (took, parsed) = peak_of(|| hookrt::Envelope::from_json(&text));
            assert!(parsed.is_ok(), "{what}: {:?}", parsed.err());
            drop(parsed);
            assert!(
                estimate >= took,
                "{what}: estimated {estimate} bytes, parsing took {took} ({} bytes of text)",
                text.len()
            );
            // Not wildly above either, or honest bodies would be refused.
            assert!(
                estimate <= 8 * took.max(text.len()),
                "{what}: estimated {estimate} bytes, parsing took {took}"
            );
        }
    }
}
