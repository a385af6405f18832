//! The documents the studies write, as types: one module per document, each a tree of
//! Serialize + Deserialize structs that the writer fills and the readers parse, so a key
//! is spelt once. Their JSON Schemas in docs/schema are generated from these types (the
//! doc comments are the schemas' descriptions) by the test at the end of this file:
//! `IOBENCH_BLESS=1 cargo test --lib -- doc::tests` rewrites them after a change.
//!
//! Documents written so far as types: the sweep index (`sweep_index`).

pub mod sweep_index;

use serde::de::{MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;
use std::marker::PhantomData;

/// A JSON object whose keys keep the order they were given in (a sweep point's options
/// in the order of its axes, the http engine's classes in the order first seen).
#[derive(Debug, Clone, PartialEq)]
pub struct Ordered<V>(pub Vec<(String, V)>);

impl<V> Default for Ordered<V> {
    fn default() -> Self {
        Ordered(Vec::new())
    }
}

impl<V> Ordered<V> {
    /// The value of `key`, if there is one.
    pub fn get(&self, key: &str) -> Option<&V> {
        self.0.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    /// Whether it has no key.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Sets `key` to `value`: in place when it is there, else last.
    pub fn insert(&mut self, key: String, value: V) {
        match self.0.iter_mut().find(|(k, _)| *k == key) {
            Some(slot) => slot.1 = value,
            None => self.0.push((key, value)),
        }
    }
}

impl<V: Serialize> Serialize for Ordered<V> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            m.serialize_entry(k, v)?;
        }
        m.end()
    }
}

impl<'de, V: Deserialize<'de>> Deserialize<'de> for Ordered<V> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Keys<V>(PhantomData<V>);
        impl<'de, V: Deserialize<'de>> Visitor<'de> for Keys<V> {
            type Value = Ordered<V>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<Ordered<V>, A::Error> {
                let mut out = Ordered(Vec::new());
                while let Some((k, v)) = a.next_entry::<String, V>()? {
                    out.insert(k, v);
                }
                Ok(out)
            }
        }
        d.deserialize_map(Keys(PhantomData))
    }
}

#[cfg(test)]
impl<V: schemars::JsonSchema> schemars::JsonSchema for Ordered<V> {
    fn inline_schema() -> bool {
        true
    }
    fn schema_name() -> std::borrow::Cow<'static, str> {
        format!("Map_of_{}", V::schema_name()).into()
    }
    fn json_schema(g: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({"type": "object", "additionalProperties": g.subschema_for::<V>()})
    }
}

/// The address every schema of docs/schema is named under (its `$id`), relative references
/// between them resolving against it.
#[cfg(test)]
const SCHEMA_BASE: &str = "https://iobench.invalid/schema/";

/// A reference to another schema of docs/schema (one not generated from a type here).
#[cfg(test)]
fn schema_ref(file: &str) -> schemars::Schema {
    schemars::json_schema!({ "$ref": file })
}

/// `iobench_env` (`--env`'s document, docs/schema/iobench-env.schema.json).
#[cfg(test)]
pub(crate) fn env_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schema_ref("iobench-env.schema.json")
}

#[cfg(test)]
mod tests {
    use super::*;
    use schemars::generate::SchemaSettings;
    use schemars::JsonSchema;
    use std::path::PathBuf;

    /// The schema of document `T`, as docs/schema holds it (`name`.schema.json).
    fn schema_of<T: JsonSchema>(name: &str) -> String {
        let g = SchemaSettings::draft2020_12()
            .for_serialize()
            .into_generator();
        let mut s = g.into_root_schema_for::<T>();
        let o = s.ensure_object();
        let mut out = serde_json::Map::new();
        out.insert("$schema".into(), o.remove("$schema").unwrap_or_default());
        out.insert(
            "$id".into(),
            format!("{SCHEMA_BASE}{name}.schema.json").into(),
        );
        out.extend(std::mem::take(o));
        let mut out = serde_json::Value::Object(out);
        unwrap_descriptions(&mut out);
        serde_json::to_string_pretty(&out).unwrap_or_default() + "\n"
    }

    /// A doc comment's lines joined into its paragraphs (a description is not wrapped).
    fn unwrap_descriptions(v: &mut serde_json::Value) {
        match v {
            serde_json::Value::Object(m) => {
                for (k, x) in m.iter_mut() {
                    match x {
                        serde_json::Value::String(s) if k == "description" => {
                            *s = s
                                .split("\n\n")
                                .map(|p| p.replace('\n', " "))
                                .collect::<Vec<_>>()
                                .join("\n\n");
                        }
                        _ => unwrap_descriptions(x),
                    }
                }
            }
            serde_json::Value::Array(a) => a.iter_mut().for_each(unwrap_descriptions),
            _ => {}
        }
    }

    /// Every generated schema: its file name stem and its text.
    fn generated() -> Vec<(&'static str, String)> {
        vec![(
            "sweep-index",
            schema_of::<sweep_index::SweepIndex>("sweep-index"),
        )]
    }

    #[test]
    fn committed_schemas_are_the_generated_ones() {
        let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("docs/schema");
        let bless = std::env::var_os("IOBENCH_BLESS").is_some();
        let mut stale = Vec::new();
        for (name, text) in generated() {
            let path = dir.join(format!("{name}.schema.json"));
            if bless {
                std::fs::write(&path, &text).unwrap();
            } else if std::fs::read_to_string(&path).ok().as_deref() != Some(text.as_str()) {
                stale.push(path.display().to_string());
            }
        }
        assert!(
            stale.is_empty(),
            "not what the types generate: {stale:?} (IOBENCH_BLESS=1 cargo test --lib -- \
             doc::tests rewrites them)"
        );
    }
}
