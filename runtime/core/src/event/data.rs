//! An event's data: the kind's JSON object, and its JSON text.
//!
//! Hooks receive the data as JSON text. An envelope parsed from JSON keeps
//! the text of its `data` exactly as it came in, so a delivery passes it
//! through instead of serializing the parsed value again; an envelope built
//! in code serializes it once, on first delivery. Any change made through
//! [`Data`]'s mutable access (`DerefMut`) drops the kept text, so hooks
//! never see text that differs from the value the runtime decides on.

use std::ops::{Deref, DerefMut};
use std::sync::{Arc, OnceLock};

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A kind's data (a JSON value; an object in a valid envelope) and its JSON text.
/// Reads like a [`serde_json::Value`] (`data["actions"]`, `data.get(..)`).
#[derive(Clone, Default)]
pub struct Data {
    value: serde_json::Value,
    /// The value as JSON text: the input's own, or serialized on first use.
    text: OnceLock<Arc<str>>,
}

impl Data {
    /// Data from a parsed value (its text is serialized on first use).
    pub fn new(value: serde_json::Value) -> Data {
        Data {
            value,
            text: OnceLock::new(),
        }
    }

    /// The value.
    pub fn value(&self) -> &serde_json::Value {
        &self.value
    }

    /// The value, given up.
    pub fn into_value(self) -> serde_json::Value {
        self.value
    }

    /// The JSON text hooks receive: the input's own text when the envelope
    /// was parsed and not changed since, else the value serialized (once).
    pub fn text(&self) -> &str {
        self.text.get_or_init(|| {
            // Straight into a buffer (`to_string` on the value goes through
            // the formatter, about twice as slow); serializing a `Value`
            // cannot fail.
            serde_json::to_string(&self.value)
                .unwrap_or_default()
                .into()
        })
    }
}

impl Deref for Data {
    type Target = serde_json::Value;
    fn deref(&self) -> &serde_json::Value {
        &self.value
    }
}

impl DerefMut for Data {
    /// Mutable access drops the kept text: it may no longer say the same.
    fn deref_mut(&mut self) -> &mut serde_json::Value {
        self.text = OnceLock::new();
        &mut self.value
    }
}

impl From<serde_json::Value> for Data {
    fn from(value: serde_json::Value) -> Data {
        Data::new(value)
    }
}

impl PartialEq for Data {
    fn eq(&self, other: &Data) -> bool {
        self.value == other.value
    }
}

impl Eq for Data {}

impl PartialEq<serde_json::Value> for Data {
    fn eq(&self, other: &serde_json::Value) -> bool {
        &self.value == other
    }
}

impl std::fmt::Debug for Data {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.value.fmt(f)
    }
}

impl std::fmt::Display for Data {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.value.fmt(f)
    }
}

impl Serialize for Data {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.value.serialize(s)
    }
}

impl<'de> Deserialize<'de> for Data {
    /// Keeps the input's text beside the parsed value. The text is taken as
    /// serde_json scanned it (valid JSON); the value is parsed from it with
    /// the same checks (recursion limit) as any other field.
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Data, D::Error> {
        let raw: Box<serde_json::value::RawValue> = Deserialize::deserialize(d)?;
        let value: serde_json::Value =
            serde_json::from_str(raw.get()).map_err(serde::de::Error::custom)?;
        let text: Arc<str> = Arc::from(raw.get());
        Ok(Data {
            value,
            text: OnceLock::from(text),
        })
    }
}
