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

    /// A sweep index in the layout sweep writes: a failed repeat (no error number), an
    /// http class beside a direction, a zipped axis, options out of alphabetical order.
    const INDEX: &str = r#"{
  "schema_version": 1,
  "iobench": "iobench-0",
  "sweep": {
    "args": [
      "--name=j"
    ],
    "axes": [
      {
        "name": "rw",
        "values": [
          "read"
        ],
        "zip": [
          {
            "name": "bs",
            "values": [
              "4k"
            ]
          }
        ]
      }
    ],
    "repeat": 2
  },
  "iobench_env": {},
  "noise_cv": 0.05,
  "points": [
    {
      "point": 1,
      "params": {
        "rw": "read",
        "bs": "4k"
      },
      "file": "rw=read.r1.json",
      "status": "failed",
      "exit_code": 1,
      "elapsed_s": 1.5,
      "repeats": 2,
      "runs": [
        {
          "repeat": 1,
          "file": "rw=read.r1.json",
          "status": "ok",
          "exit_code": 0,
          "elapsed_s": 0.5,
          "failed": false,
          "read": {
            "iops": 10.0,
            "bw_bytes": 40960.0,
            "io_bytes": 40960,
            "total_ios": 10,
            "runtime_ms": 1000,
            "lat_mean_ns": 1.5,
            "lat_min_ns": 1.0,
            "lat_max_ns": 2.0,
            "percentiles_of": "clat",
            "p50_ns": 1.0,
            "p90_ns": 2.0,
            "p99_ns": 2.0,
            "p99_9_ns": 2.0
          },
          "iobench_http": {
            "GET ttfb": {
              "iops": 1.0,
              "bw_bytes": 0.0,
              "io_bytes": 0,
              "total_ios": 1,
              "runtime_ms": 1000,
              "lat_mean_ns": 3.0,
              "lat_min_ns": 3.0,
              "lat_max_ns": 3.0,
              "percentiles_of": "lat",
              "p50_ns": 3.0,
              "p90_ns": 3.0,
              "p99_ns": 3.0,
              "p99_9_ns": 3.0
            }
          }
        },
        {
          "repeat": 2,
          "file": "rw=read.r2.json",
          "status": "failed",
          "exit_code": 1,
          "elapsed_s": 1.0,
          "failed": true,
          "error": null,
          "reason": "the run was ended"
        }
      ],
      "failed": true,
      "error": null,
      "reason": "the run was ended"
    }
  ]
}
"#;

    #[test]
    fn a_sweep_index_reads_back_as_it_was_written() {
        let doc: sweep_index::SweepIndex = serde_json::from_str(INDEX).unwrap();
        assert_eq!(doc.points[0].params.0[1], ("bs".into(), "4k".into()));
        assert_eq!(doc.points[0].failure.as_ref().map(|f| f.error), Some(None));
        assert!(doc.points[0].runs[1].rows.read.is_none());
        let again = serde_json::to_string_pretty(&doc).unwrap() + "\n";
        assert_eq!(again, INDEX);
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
