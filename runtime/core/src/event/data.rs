//! An event's data: the kind's JSON object, and its JSON text.
//!
//! Hooks receive the data as JSON text. An envelope parsed from JSON keeps
//! the text of its `data` exactly as it came in, so a delivery passes it
//! through instead of serializing the parsed value again; an envelope built
//! in code serializes it once, on first delivery. Any change made through
//! [`Data`]'s mutable access (`DerefMut`) drops the kept text, so hooks
//! never see text that differs from the value the runtime decides on.
//! Serializing an envelope (to the journal, to JetStream) writes the kept
//! text as it is too, instead of escaping every string of the value again.

use std::ops::{Deref, DerefMut};
use std::sync::{Arc, OnceLock};

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::value::RawValue;

/// A kind's data (a JSON value; an object in a valid envelope) and its JSON text.
/// Reads like a [`serde_json::Value`] (`data["actions"]`, `data.get(..)`).
#[derive(Clone, Default)]
pub struct Data {
    value: serde_json::Value,
    /// The value as JSON text: the input's own, or serialized on first use.
    text: OnceLock<Arc<RawValue>>,
}

impl Data {
    /// Data from a parsed value (its text is serialized on first use).
    pub(crate) fn new(value: serde_json::Value) -> Data {
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
    pub(crate) fn text(&self) -> &str {
        self.text
            .get_or_init(|| {
                // Straight into a buffer (`to_string` on the value goes
                // through the formatter, about twice as slow), and taken as
                // it is: serializing a `Value` cannot fail, and what it
                // writes is JSON.
                serde_json::value::to_raw_value(&self.value)
                    .unwrap_or_else(|_| RawValue::NULL.to_owned())
                    .into()
            })
            .get()
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
    /// The kept text as it is, when there is one (JSON serializers write it
    /// verbatim; `serde_json::to_value` parses it back), else the value.
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.text.get() {
            Some(text) => text.serialize(s),
            None => self.value.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for Data {
    /// Keeps the input's text beside the parsed value. The text is taken as
    /// serde_json scanned it (valid JSON); the value is parsed from it with
    /// the same checks (recursion limit) as any other field, and an object
    /// that names a key twice is refused: hooks get the text, and a hook's
    /// parser could take the first of two keys where the runtime's takes the
    /// last, so the two would read different data.
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Data, D::Error> {
        let raw: Box<serde_json::value::RawValue> = Deserialize::deserialize(d)?;
        let UniqueKeys(value) =
            serde_json::from_str(raw.get()).map_err(serde::de::Error::custom)?;
        Ok(Data {
            value,
            text: OnceLock::from(Arc::from(raw)),
        })
    }
}

/// A JSON value whose objects name each key once (serde_json's `Value` keeps
/// the last of two equal keys without a word).
struct UniqueKeys(serde_json::Value);

impl<'de> Deserialize<'de> for UniqueKeys {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<UniqueKeys, D::Error> {
        d.deserialize_any(UniqueKeysVisitor).map(UniqueKeys)
    }
}

struct UniqueKeysVisitor;

impl<'de> serde::de::Visitor<'de> for UniqueKeysVisitor {
    type Value = serde_json::Value;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<serde_json::Value, E> {
        Ok(v.into())
    }

    fn visit_i64<E>(self, v: i64) -> Result<serde_json::Value, E> {
        Ok(v.into())
    }

    fn visit_u64<E>(self, v: u64) -> Result<serde_json::Value, E> {
        Ok(v.into())
    }

    fn visit_f64<E>(self, v: f64) -> Result<serde_json::Value, E> {
        Ok(serde_json::Number::from_f64(v).map_or(serde_json::Value::Null, Into::into))
    }

    fn visit_str<E>(self, v: &str) -> Result<serde_json::Value, E> {
        Ok(v.into())
    }

    fn visit_string<E>(self, v: String) -> Result<serde_json::Value, E> {
        Ok(v.into())
    }

    fn visit_unit<E>(self) -> Result<serde_json::Value, E> {
        Ok(serde_json::Value::Null)
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(
        self,
        mut seq: A,
    ) -> Result<serde_json::Value, A::Error> {
        let mut items = Vec::new();
        while let Some(UniqueKeys(v)) = seq.next_element()? {
            items.push(v);
        }
        Ok(serde_json::Value::Array(items))
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(
        self,
        mut map: A,
    ) -> Result<serde_json::Value, A::Error> {
        let mut object = serde_json::Map::new();
        while let Some(key) = map.next_key::<String>()? {
            if object.contains_key(&key) {
                return Err(serde::de::Error::custom(format!(
                    "the key `{key}` appears twice in one object; send each key once"
                )));
            }
            let UniqueKeys(v) = map.next_value()?;
            object.insert(key, v);
        }
        Ok(serde_json::Value::Object(object))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Keys out of order, an escaped character, a number with its own
    /// spelling, spaces: none of which serializing the value keeps.
    const INPUT: &str = r#"{"zeta": 1.50, "alpha": "caf\u00e9", "list": [ 1, 2 ]}"#;

    #[test]
    fn serializing_parsed_data_writes_the_input_text_as_it_came() {
        let data: Data = serde_json::from_str(INPUT).unwrap();
        assert_eq!(serde_json::to_string(&data).unwrap(), INPUT);
        // The text is JSON: read back, it is the same value.
        let again: Data = serde_json::from_str(&serde_json::to_string(&data).unwrap()).unwrap();
        assert_eq!(again, data);
        assert_eq!(serde_json::to_value(&data).unwrap(), *data.value());
    }

    #[test]
    fn serializing_changed_data_writes_the_value_not_the_old_text() {
        let mut data: Data = serde_json::from_str(INPUT).unwrap();
        data["alpha"] = serde_json::json!("tea");
        assert_eq!(
            serde_json::to_string(&data).unwrap(),
            r#"{"alpha":"tea","list":[1,2],"zeta":1.5}"#
        );
        assert_eq!(data.text(), r#"{"alpha":"tea","list":[1,2],"zeta":1.5}"#);
    }
}
