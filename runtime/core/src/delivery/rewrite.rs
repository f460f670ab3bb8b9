//! Rewrites of a tool call's input: each checked (a JSON object within
//! [`MAX_REWRITE_BYTES`], with the keys it changed) and chained in
//! registration order, each hook seeing the input as rewritten so far.

use serde_json::Value;

use crate::delivery::decision::{MAX_REWRITE_BYTES, Rewrite};

/// The inputs of the calls of one event as rewritten so far, and each rewrite.
#[derive(Debug, Default)]
pub(crate) struct RewriteChain {
    rewrites: Vec<Vec<Rewrite>>,
}

impl RewriteChain {
    /// A chain over `n` calls.
    pub(crate) fn new(n: usize) -> RewriteChain {
        RewriteChain {
            rewrites: vec![Vec::new(); n],
        }
    }

    /// Checks `hook`'s rewrite of call `i` (whose input is `before`): a JSON
    /// object within [`MAX_REWRITE_BYTES`]. `Err` says why it is malformed.
    pub(crate) fn check(before: &Value, json: &str) -> Result<(Value, Vec<String>), String> {
        if json.len() > MAX_REWRITE_BYTES {
            return Err(format!(
                "a rewritten input of {} bytes, above the {MAX_REWRITE_BYTES}-byte limit",
                json.len()
            ));
        }
        let after: Value = serde_json::from_str(json)
            .map_err(|e| format!("a rewritten input that is not JSON ({e})"))?;
        let Value::Object(new) = &after else {
            return Err("a rewritten input that is not a JSON object".to_owned());
        };
        let old = before.as_object();
        let mut changed: Vec<String> = new
            .iter()
            .filter(|(k, v)| old.and_then(|o| o.get(*k)) != Some(v))
            .map(|(k, _)| k.clone())
            .chain(
                old.into_iter()
                    .flat_map(|o| o.keys())
                    .filter(|k| !new.contains_key(*k))
                    .cloned(),
            )
            .collect();
        changed.sort();
        Ok((after, changed))
    }

    /// Records a checked rewrite of call `i`.
    pub(crate) fn push(&mut self, i: usize, hook: &str, input: Value, changed: Vec<String>) {
        if let Some(list) = self.rewrites.get_mut(i) {
            list.push(Rewrite {
                hook: hook.to_owned(),
                changed,
                input,
            });
        }
    }

    /// The rewrites of each call, in the order they applied.
    pub(crate) fn finish(self) -> Vec<Vec<Rewrite>> {
        self.rewrites
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rewrite_must_be_an_object_within_the_bound_and_names_what_it_changed() {
        let before = serde_json::json!({"command": "rm -rf /", "timeout": 5});
        let (after, changed) =
            RewriteChain::check(&before, r#"{"command":"rm -rf ./build","description":"x"}"#)
                .unwrap();
        assert_eq!(after["command"], "rm -rf ./build");
        assert_eq!(changed, ["command", "description", "timeout"]);
        assert_eq!(
            RewriteChain::check(&before, "[1]").unwrap_err(),
            "a rewritten input that is not a JSON object"
        );
        assert!(
            RewriteChain::check(&before, "{")
                .unwrap_err()
                .starts_with("a rewritten input that is not JSON")
        );
        // The bound is inclusive: exactly MAX_REWRITE_BYTES passes, one more does not.
        let sized = |n: usize| format!("{{\"a\":\"{}\"}}", "x".repeat(n - 8));
        let at_bound = sized(MAX_REWRITE_BYTES);
        assert_eq!(at_bound.len(), MAX_REWRITE_BYTES);
        assert!(RewriteChain::check(&before, &at_bound).is_ok());
        assert_eq!(
            RewriteChain::check(&before, &sized(MAX_REWRITE_BYTES + 1)).unwrap_err(),
            "a rewritten input of 1048577 bytes, above the 1048576-byte limit"
        );
    }
}
