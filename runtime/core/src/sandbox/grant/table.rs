//! What a grant's table reads as: a [`GrantTable`], each grant's own type
//! behind one face, and the reader of a grant that takes no settings.

use std::any::Any;
use std::sync::Arc;

use serde_json::value::RawValue;

/// A grant's table as read: the grant's own type (its module reads it back
/// with [`GrantTable::get`]), compared, pinned and printed as that type's
/// JSON (`null` for a grant without settings).
#[derive(Clone)]
pub struct GrantTable {
    /// The table as JSON, in its type's field order; `None`: no settings.
    json: Option<Box<RawValue>>,
    typed: Option<Arc<dyn Any + Send + Sync>>,
}

impl GrantTable {
    /// A grant without settings (`log = {}`, or named in the list form).
    pub(crate) fn empty() -> GrantTable {
        GrantTable {
            json: None,
            typed: None,
        }
    }

    /// The table `table`, as its grant's module read it.
    pub(crate) fn of<T: serde::Serialize + Send + Sync + 'static>(table: T) -> GrantTable {
        let json = serde_json::to_string(&table)
            .ok()
            .and_then(|text| RawValue::from_string(text).ok());
        GrantTable {
            json,
            typed: Some(Arc::new(table)),
        }
    }

    /// Whether the grant was given no settings.
    pub fn is_empty(&self) -> bool {
        self.typed.is_none()
    }

    /// The table, if it is a `T` (the grant's own table type).
    pub fn get<T: 'static>(&self) -> Option<&T> {
        self.typed.as_deref().and_then(|t| t.downcast_ref())
    }

    /// The table as JSON (`null` without settings).
    pub fn json(&self) -> &str {
        self.json.as_deref().map_or("null", RawValue::get)
    }
}

impl PartialEq for GrantTable {
    fn eq(&self, other: &GrantTable) -> bool {
        self.json() == other.json()
    }
}

impl Eq for GrantTable {}

impl std::fmt::Debug for GrantTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.json())
    }
}

impl serde::Serialize for GrantTable {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match &self.json {
            Some(json) => json.serialize(s),
            None => s.serialize_unit(),
        }
    }
}

/// A table for a grant that takes no settings: none, or `{}`.
pub(crate) fn no_table(value: Option<&toml::Value>) -> Result<GrantTable, Vec<String>> {
    match value {
        None => Ok(GrantTable::empty()),
        Some(toml::Value::Table(t)) if t.is_empty() => Ok(GrantTable::empty()),
        Some(_) => Err(vec!["takes no settings: write it as `{}`".to_owned()]),
    }
}
